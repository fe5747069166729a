package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node dies ({@code kill -9}) while clients write through the other nodes: its tablets are
 * placed on the nodes left and serve again, their writes that were only in the dead node's
 * commit log replayed, and every acknowledged write reads back. A write that failed meanwhile
 * may or may not be there; nothing else is. Prints how long after the kill every tablet was
 * serving again. The dead node's log is sorted into recovery pieces across the live nodes
 * before its tablets are placed. The argument (what is assumed, what is guaranteed) is in
 * docs/fencing.md.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class NodeDeathTest {
  @Test
  void aKilledNodesTabletsServeElsewhereWithEveryAcknowledgedWrite() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      long served = killOneUnderLoad(cluster, List.of("n1", "n2", "n3", "n4"), "n3");
      assertTrue(served < 30_000, "the killed node's tablets took " + served + " ms to serve again (target: 10 s)");
    }
  }

  /**
   * The scenario on {@code cluster}: starts {@code names} (the first runs the master), writes
   * through the others, kills {@code victim} ({@code kill -9}) once it owns tablets, waits
   * until its tablets serve elsewhere, and checks every acknowledged write. Returns how many
   * milliseconds after the kill the victim's tablets answered reads.
   */
  static long killOneUnderLoad(ClusterFixture cluster, List<String> names, String victim) throws Exception {
    for (String n : names) {
      cluster.add(n);
    }
    NodeJvm n1 = cluster.node(names.get(0));
    List<String> survivorNames = names.stream().filter(n -> !n.equals(victim)).toList();
    List<NodeJvm> survivors = survivorNames.stream().map(cluster::node).toList();
    NodeJvm reader = survivors.get(1);
    Workload load = Workload.create(cluster, n1, 8, 400);
    Map<String, String[]> before = Workload.awaitPlacement(n1, Set.copyOf(names), Duration.ofSeconds(60),
        t -> t.values().stream().anyMatch(o -> o[0].equals(victim)));
    List<Integer> victims = new ArrayList<>();
    List<Integer> others = new ArrayList<>();
    int range = 0;
    for (String[] owner : before.values()) {
      (owner[0].equals(victim) ? victims : others).add(range++);
    }
    load.startThroughFailures(survivors);
    long placed;
    long served;
    try {
      Thread.sleep(2_000);
      long killedAt = System.nanoTime();
      cluster.node(victim).kill();
      Workload.awaitPlacement(n1, Set.copyOf(survivorNames), Duration.ofSeconds(60), t -> true);
      placed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
      load.awaitReadable(reader, victims, Duration.ofSeconds(60));
      served = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
      load.awaitReadable(reader, others, Duration.ofSeconds(60));
      Thread.sleep(2_000);
    } finally {
      load.stop();
    }
    System.out.printf("the killed node %s's %d tablets were placed on other nodes %d ms after the kill, and "
        + "answered reads %d ms after it%n", victim, victims.size(), placed, served);
    load.verify(reader);
    assertTrue(n1.tail(1_000_000).contains("segments of node " + victim + "'s commit log into recovery pieces"),
        "the master had the live nodes sort the dead node's log into pieces before placing its tablets");
    return served;
  }
}
