package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.ActorTestConfig;
import io.tabula.persistence.schema.GcPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master on the test's time: its ticks come from Pekko's manual scheduler and the
 * monotonic time its placements, fences and open checks go by from a clock the test moves with
 * it, so waits of tens of seconds are checked without waiting (the membership is a stand-in).
 */
@ExtendWith(LogCapturingExtension.class)
class MasterClockTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  @TempDir
  Path dir;

  private ActorTestKit kit;
  private ManualTime time;
  private final AtomicLong nanos = new AtomicLong();

  /** A stand-in membership: n2 Up; what the master fenced. */
  private static final class Nodes implements MasterNodes {
    volatile List<ClusterNodes.NodeInfo> members = List.of();
    final List<String> fenced = Collections.synchronizedList(new ArrayList<>());

    @Override
    public List<ClusterNodes.NodeInfo> all() {
      return members;
    }

    @Override
    public CompletionStage<Void> fence(String node, Set<String> spare) {
      fenced.add(node);
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> fenceLogs(java.util.Collection<String> folders) {
      fenced.addAll(folders);
      return CompletableFuture.completedFuture(null);
    }
  }

  private static ClusterNodes.NodeInfo up(String name) {
    return new ClusterNodes.NodeInfo(name, new Address("pekko", "tabula", "127.0.0.1", 7002), 2, "", "", name + ".a",
        MemberStatus.up(), true);
  }

  @AfterEach
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  /** Moves the master's time on by {@code d}, a second at a time, as its ticks would see it. */
  private void pass(Duration d) {
    for (long s = 0; s < d.toSeconds(); s++) {
      nanos.addAndGet(1_000_000_000L);
      time.timePasses(Duration.ofSeconds(1));
    }
  }

  @SuppressWarnings("unchecked")
  private <R> R call(ActorRef<Master.Command> master, java.util.function.Function<ActorRef<R>, Master.Command> c) {
    TestProbe<R> probe = (TestProbe<R>) (TestProbe<?>) kit.createTestProbe(Object.class);
    master.tell(c.apply(probe.getRef()));
    return probe.receiveMessage(WAIT);
  }

  /**
   * The slow path (docs/fencing.md): the tablets of an owner that this master never saw in the
   * membership (a whole cluster starting again without it) are placed elsewhere only once it
   * has been absent for {@code place-tablets-of-absent-node-after} (30 s), and only after its
   * logs are fenced.
   */
  @Test
  void anAbsentOwnersTabletsArePlacedOnlyAfterTheAbsenceAndAfterItsFence() {
    kit = ActorTestKit.create(ManualTime.config().withFallback(ActorTestConfig.withJournalIn(dir)));
    time = ManualTime.get(kit.system());
    Nodes nodes = new Nodes();
    ActorRef<Master.Command> master = kit.spawn(Master.create(PersistenceId.ofUniqueId("clock-master"), () -> 1L,
        nanos::get, nodes, null, MasterSettings.DEFAULTS));
    nodes.members = List.of(up("n2"));
    StatusReply<TableInfo> created = call(master, r -> new Master.CreateTable("t", Map.of("f", GcPolicy.KEEP_ALL),
        List.of(), r));
    assertTrue(created.isSuccess());
    Directory d = call(master, Master.GetDirectory::new);
    String id = d.tabletsOf("t").get(0).id();
    assertEquals("n2", d.ownerOf(id), "placed on the one Up node");

    // The cluster starts again without n2: n3 comes up, n2 never does.
    nodes.members = List.of(up("n3"));
    pass(Duration.ofSeconds(29));
    assertEquals("n2", call(master, Master.GetDirectory::new).ownerOf(id), "n2 is waited for");
    assertEquals(List.of(), nodes.fenced);
    pass(Duration.ofSeconds(3));
    assertEquals(List.of("n2"), nodes.fenced, "fenced once absent for 30 s");
    pass(Duration.ofSeconds(1));
    assertEquals("n3", call(master, Master.GetDirectory::new).ownerOf(id), "then placed on n3");
  }
}
