package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The body shared by the scenarios where one node is cut off from the others while its clients
 * still reach it (frozen: {@link NodeFreezeTest}; partitioned: {@link NodePartitionTest}).
 * Four nodes; writers through every node, the isolated one (n3) included, and readers by key
 * through n3 and n2 that go on through failures and check every read that answers. The fault
 * starts; the master fences n3's commit log and places its tablets on the others, which serve
 * them; after a while the fault ends, and n3 must stop (fenced or downed) within 60 s. Every
 * acknowledged write reads back; a failed write may or may not be there; nothing else is.
 * Meanwhile a writer and a reader through every node work on one register row per tablet
 * (unique values), and each row's recorded history must be linearizable ({@link
 * RegisterHistory}): so nothing n3 acknowledged or answered after its tablets moved escapes.
 */
final class IsolatedNodeScenario {
  /** How the scenario cuts n3 off, and how it lets it back. */
  interface Fault {
    void start(ClusterFixture cluster, NodeJvm n3) throws Exception;

    void end(ClusterFixture cluster, NodeJvm n3) throws Exception;
  }

  private IsolatedNodeScenario() {}

  /** Runs the scenario on {@code cluster} (four nodes n1..n4 started); {@code what} names the fault in what it prints. */
  static void run(ClusterFixture cluster, String what, Fault fault) throws Exception {
    NodeJvm n1 = cluster.node("n1");
    NodeJvm n2 = cluster.node("n2");
    NodeJvm n3 = cluster.node("n3");
    Workload load = Workload.create(cluster, n1, 8, 400);
    Map<String, String[]> before = Workload.awaitPlacement(n1, Set.of("n1", "n2", "n3", "n4"),
        Duration.ofSeconds(60), t -> t.values().stream().anyMatch(o -> o[0].equals("n3")));
    List<Integer> isolated = new ArrayList<>();
    int range = 0;
    for (String[] owner : before.values()) {
      if (owner[0].equals("n3")) {
        isolated.add(range);
      }
      range++;
    }
    load.startThroughFailures(List.of(n1, n2, n3, cluster.node("n4")))
        .withReaderThroughFailures(n3).withReaderThroughFailures(n2)
        .withRegisters(List.of(n1, n2, n3, cluster.node("n4")));
    try {
      Thread.sleep(2_000);
      long startedAt = System.nanoTime();
      fault.start(cluster, n3);
      Workload.awaitPlacement(n1, Set.of("n1", "n2", "n4"), Duration.ofSeconds(60), t -> true);
      load.awaitReadable(n2, isolated, Duration.ofSeconds(60));
      System.out.printf("n3 %s: its %d tablets served elsewhere %d ms later%n", what, isolated.size(),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt));
      Thread.sleep(3_000);
      long endedAt = System.nanoTime();
      fault.end(cluster, n3);
      assertTrue(n3.awaitExit(Duration.ofSeconds(60)), "n3 still runs 60 s after the fault ended; its log:\n"
          + n3.tail(60));
      System.out.printf("n3 had stopped %d ms after the fault ended%n",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - endedAt));
      Thread.sleep(2_000);
    } finally {
      load.stop();
    }
    assertTrue(n3.logContains("is fenced") || n3.logContains("Down"), "n3 stopped because it was fenced or "
        + "downed; its log:\n" + n3.tail(60));
    load.verify(n2);
    load.checkRegisters(n2);
  }
}
