package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The master's node dies ({@code kill -9}) while splits, merges and moves are under way. The
 * nodes run with small tablets and quick merges (as in {@link SplitsAndMergesTest}); writers
 * through the two other nodes fill the {@code k} range, whose tablet splits again and again,
 * the cold {@code z} tablets merge, and a mover asks for a random move every half second. The
 * kill comes right after a move was accepted. Afterwards: the master runs again on another
 * node (it accepts moves, and splits or merges go on), every tablet serves on a live node, the
 * tablets' row ranges cover the key space once (nothing served twice, nothing missing), and
 * every acknowledged write reads back once, in order. Prints how long the master and the dead
 * node's tablets took to come back.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class MasterDeathTest {
  @Test
  void theMastersNodeDiesDuringSplitsMergesAndMoves() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.configure(SplitsAndMergesTest.SMALL_TABLETS);
      killTheMasterDuringChanges(cluster);
    }
  }

  /**
   * The scenario on {@code cluster}, configured already: starts n1 (the master), n2 and n3,
   * kills n1 under splits, merges, moves and writes, and checks what the class comment says.
   */
  static void killTheMasterDuringChanges(ClusterFixture cluster) throws Exception {
    {
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      NodeJvm n1 = cluster.node("n1");
      NodeJvm n2 = cluster.node("n2");
      NodeJvm n3 = cluster.node("n3");
      ClusterFixture.assertRunsMaster(n1);
      Workload load = Workload.create(cluster, n2, List.of("k", "z1", "z2", "z3", "z4"),
          List.of("k", "z1", "z2", "z3", "z4"), 100)
          .startThroughFailures(List.of(n2, n3), 1, 1024);
      AtomicBoolean moving = new AtomicBoolean(true);
      AtomicInteger accepted = new AtomicInteger();
      Thread mover = new Thread(() -> moveAtRandom(List.of(n2, n3), moving, accepted), "mover");
      mover.setDaemon(true);
      long killedAt;
      long mastered;
      long served;
      try {
        Set<String> made = awaitChange(n2, Set.of("t-1", "t-2", "t-3", "t-4", "t-5", "t-6"), 2,
            Duration.ofSeconds(90));
        mover.start();
        // Kill n1 right after it accepted a move, so at least one move is half done.
        int before = accepted.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (accepted.get() == before && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        killedAt = System.nanoTime();
        n1.kill();
        System.out.printf("killed n1 (the master's node) with %d tablets made by splits or merges, %d moves "
            + "accepted%n", made.size(), accepted.get());
        mastered = awaitMaster(n2, n3, killedAt, Duration.ofSeconds(120));
        Map<String, String[]> placed = Workload.awaitPlacement(n2, Set.of("n2", "n3"), Duration.ofSeconds(90),
            t -> true);
        served = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        // The new master goes on splitting and merging.
        awaitChange(n2, placed.keySet(), 1, Duration.ofSeconds(90));
        moving.set(false);
        mover.join(30_000);
        Workload.awaitPlacement(n2, Set.of("n2", "n3"), Duration.ofSeconds(90), t -> true);
      } finally {
        moving.set(false);
        load.stop();
      }
      assertCoverOnce(ClusterFixture.ranges(n2, "t"));
      // A split or merge under way when the load stopped may reach one node's copy of the
      // directory a moment before the other's: the two copies must agree within 10 s.
      long agreeBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (ClusterFixture.ranges(n2, "t").size() != ClusterFixture.ranges(n3, "t").size()
          && System.nanoTime() < agreeBy) {
        Thread.sleep(200);
      }
      assertEquals(ClusterFixture.ranges(n2, "t").size(), ClusterFixture.ranges(n3, "t").size(),
          "n2 and n3 see the same tablets");
      load.verify(n3);
      System.out.printf("after the master's node was killed: a new master accepted a move %d ms later; every "
          + "tablet served on n2 or n3 %d ms later%n", mastered, served);
    }
  }

  /** Asks for moves of random tablets to the other live node, through either node, until stopped. */
  private static void moveAtRandom(List<NodeJvm> via, AtomicBoolean moving, AtomicInteger accepted) {
    Random random = new Random(42);
    while (moving.get()) {
      try {
        NodeJvm n = via.get(random.nextInt(via.size()));
        List<String> ids = new ArrayList<>(ClusterFixture.tablets(n, "t").keySet());
        if (!ids.isEmpty()) {
          String id = ids.get(random.nextInt(ids.size()));
          String to = via.get(random.nextInt(via.size())).name;
          if (n.post("/tabula/tablets/" + id + "/move?to=" + to).statusCode() == 202) {
            accepted.incrementAndGet();
          }
        }
        Thread.sleep(500);
      } catch (Exception e) {
        // A node or the master not answering is what this scenario brings about; try again.
        try {
          Thread.sleep(500);
        } catch (InterruptedException stop) {
          return;
        }
      }
    }
  }

  /**
   * Waits until at least {@code atLeast} tablets of table t that {@code via} shows are not among
   * {@code from} (made by splits or merges); returns them.
   */
  private static Set<String> awaitChange(NodeJvm via, Set<String> from, int atLeast, Duration within)
      throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    Set<String> made = new HashSet<>();
    while (System.nanoTime() < deadline) {
      made = new HashSet<>(ClusterFixture.tablets(via, "t").keySet());
      made.removeAll(from);
      if (made.size() >= atLeast) {
        return made;
      }
      Thread.sleep(250);
    }
    throw new AssertionError("fewer than " + atLeast + " tablets made by splits or merges within " + within
        + " (beyond " + from + "): " + made);
  }

  /** Waits until n2 or n3 accepts a move (the master runs again); returns ms since the kill. */
  static long awaitMaster(NodeJvm n2, NodeJvm n3, long killedAt, Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      Map<String, String[]> t = ClusterFixture.tablets(n2, "t");
      for (Map.Entry<String, String[]> e : t.entrySet()) {
        String owner = e.getValue()[0];
        if (e.getValue()[1].equals("serving") && (owner.equals("n2") || owner.equals("n3"))) {
          String to = owner.equals("n2") ? "n3" : "n2";
          try {
            if (n3.post("/tabula/tablets/" + e.getKey() + "/move?to=" + to).statusCode() == 202) {
              return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            }
          } catch (java.net.http.HttpTimeoutException noMasterYet) {
            // The node's ask went to the dead master and timed out; ask again.
          }
          break;
        }
      }
      Thread.sleep(250);
    }
    throw new AssertionError("no master accepted a move within " + within + " of the kill");
  }

  /** The ranges, in row order, start at the empty row, end at the end, and each starts where the last ended. */
  static void assertCoverOnce(List<String[]> ranges) {
    assertTrue(!ranges.isEmpty(), "table t has tablets");
    StringBuilder shown = new StringBuilder();
    ranges.forEach(r -> shown.append(r[0]).append(" [").append(r[1]).append(", ").append(r[2]).append(") "));
    assertEquals("\\\"\\\"", ranges.get(0)[1], "the first tablet starts at the empty row: " + shown);
    for (int i = 1; i < ranges.size(); i++) {
      assertEquals(ranges.get(i - 1)[2], ranges.get(i)[1], "tablet " + ranges.get(i)[0]
          + " starts where the one before ends: " + shown);
    }
    String last = ranges.get(ranges.size() - 1)[2];
    assertTrue(last.equals("\\\"\\\"") || last.equals("null"), "the last tablet ends at the end: " + shown);
  }
}
