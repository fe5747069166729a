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

  /** The text of refusal {@code v}; fails if it is no refusal. */
  static String message(ConfigValidation v) {
    if (!(v instanceof Invalid invalid)) {
      throw new AssertionError("expected a refusal, was " + v);
    }
    return String.join("; ", scala.jdk.javaapi.CollectionConverters.asJava(invalid.errorMessages()));
  }
}
