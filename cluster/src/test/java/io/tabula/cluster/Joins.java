package io.tabula.cluster;

import com.typesafe.config.Config;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ConfigValidation;
import org.apache.pekko.cluster.Invalid;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/** What the tests of Pekko's join-time checks share: actor systems joined in this JVM, and a refusal's text. */
final class Joins {
  private Joins() {}

  /** A Tabula actor system on {@code config}, added to {@code started} (which the test terminates). */
  static ActorSystem<Void> system(Config config, List<ActorSystem<Void>> started) {
    ActorSystem<Void> s = ActorSystem.create(Behaviors.empty(), TabulaNode.SYSTEM_NAME, config);
    started.add(s);
    return s;
  }

  /** Terminates {@code systems} and waits up to 60 s for each. */
  static void terminate(List<ActorSystem<Void>> systems) throws Exception {
    systems.forEach(ActorSystem::terminate);
    for (ActorSystem<Void> s : systems) {
      s.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
  }

  /** Waits up to 60 s until {@code s} is Up or shutting down. */
  static void awaitUpOrStopping(ActorSystem<Void> s) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (Cluster.get(s).selfMember().status() != MemberStatus.up()
        && CoordinatedShutdown.get(s).getShutdownReason().isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("neither Up nor shutting down within 60 s");
      }
      Thread.sleep(50);
    }
  }

  /**
   * Real joins in this JVM: a node on {@code member} forms a cluster; a node on {@code refused}
   * must be refused at join (it shuts down for an incompatible configuration, never a member:
   * {@code why} otherwise); then a node on {@code joins} must come Up in the cluster.
   */
  static void refusedThenJoins(Config member, Config refused, Config joins, String why) throws Exception {
    List<ActorSystem<Void>> systems = new java.util.ArrayList<>();
    try {
      ActorSystem<Void> first = system(member, systems);
      Cluster.get(first).manager().tell(org.apache.pekko.cluster.typed.Join.create(
          Cluster.get(first).selfMember().address()));
      awaitUpOrStopping(first);
      org.junit.jupiter.api.Assertions.assertEquals(MemberStatus.up(), Cluster.get(first).selfMember().status());
      org.apache.pekko.actor.Address seed = Cluster.get(first).selfMember().address();

      ActorSystem<Void> other = system(refused, systems);
      Cluster.get(other).manager().tell(new org.apache.pekko.cluster.typed.JoinSeedNodes(List.of(seed)));
      awaitUpOrStopping(other);
      org.junit.jupiter.api.Assertions.assertEquals(
          java.util.Optional.of(CoordinatedShutdown.incompatibleConfigurationDetectedReason()),
          CoordinatedShutdown.get(other).getShutdownReason(), why);

      ActorSystem<Void> same = system(joins, systems);
      Cluster.get(same).manager().tell(new org.apache.pekko.cluster.typed.JoinSeedNodes(List.of(seed)));
      awaitUpOrStopping(same);
      org.junit.jupiter.api.Assertions.assertEquals(MemberStatus.up(), Cluster.get(same).selfMember().status(),
          "a node with what the members have did not join");
    } finally {
      terminate(systems);
    }
  }

  /** The text of refusal {@code v}; fails if it is no refusal. */
  static String message(ConfigValidation v) {
    if (!(v instanceof Invalid invalid)) {
      throw new AssertionError("expected a refusal, was " + v);
    }
    return String.join("; ", scala.jdk.javaapi.CollectionConverters.asJava(invalid.errorMessages()));
  }
}
