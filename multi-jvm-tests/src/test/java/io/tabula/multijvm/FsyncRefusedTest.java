package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
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
 * A node's disk stops making writes durable: every fsync fails from some moment on (n3 runs
 * on {@link FsyncRefusingStorage}, a test-only storage, switched on mid-run). Writers go on
 * through every node, n3 included. n3 must acknowledge nothing it could not sync, give up its
 * tablets without flushing and stop (logging why once, with the stack); the master fences its
 * log and places its tablets on the others, which replay what n3 had acknowledged. Every
 * acknowledged write reads back. Prints how long after the disk failed n3 stopped and its
 * tablets served again.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class FsyncRefusedTest {
  @Test
  void aNodeWhoseDiskRefusesFsyncGivesUpItsTabletsAndNothingAcknowledgedIsLost() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.add("n1");
      cluster.add("n2");
      cluster.configure("tabula.node.storage-class = \"" + FsyncRefusingStorage.class.getName() + "\"\n");
      NodeJvm n3 = cluster.add("n3");
      cluster.configure("");
      NodeJvm n1 = cluster.node("n1");
      NodeJvm n2 = cluster.node("n2");
      Workload load = Workload.create(cluster, n1, 6, 300);
      Map<String, String[]> before = Workload.awaitPlacement(n1, Set.of("n1", "n2", "n3"),
          Duration.ofSeconds(60), t -> t.values().stream().anyMatch(o -> o[0].equals("n3")));
      List<Integer> victims = new ArrayList<>();
      int range = 0;
      for (String[] owner : before.values()) {
        if (owner[0].equals("n3")) {
          victims.add(range);
        }
        range++;
      }
      load.startThroughFailures(List.of(n1, n2, n3));
      long stopped;
      long served;
      java.time.LocalTime switchedAt;
      try {
        Thread.sleep(2_000);
        long failedAt = System.nanoTime();
        switchedAt = java.time.LocalTime.now();
        Files.createFile(cluster.root.resolve(FsyncRefusingStorage.SWITCH));
        assertTrue(n3.awaitExit(Duration.ofSeconds(60)), "n3 still runs 60 s after its disk refused fsync; its "
            + "log:\n" + n3.tail(60));
        stopped = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failedAt);
        Workload.awaitPlacement(n1, Set.of("n1", "n2"), Duration.ofSeconds(60), t -> true);
        load.awaitReadable(n2, victims, Duration.ofSeconds(60));
        served = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failedAt);
        Thread.sleep(2_000);
      } finally {
        load.stop();
      }
      String log = n3.tail(100_000);
      assertEquals(1, log.split("failed an fsync", -1).length - 1, "n3 logs the failed fsync once; its log:\n"
          + n3.tail(80));
      // the log's fsync, or (a flush at that moment) an SSTable's or a manifest's
      assertTrue(log.contains("LogSyncFailedException") || log.contains("StorageSyncFailedException"),
          "with the stack; its log:\n" + n3.tail(80));
      assertTrue(n1.tail(100_000).contains("fencing node n3") || n2.tail(100_000).contains("fencing node n3"),
          "the master fenced n3's log before placing its tablets");
      load.verify(n2);
      System.out.printf("n3's disk refused fsync: n3 stopped %d ms later; its %d tablets served on n1 and n2 %d ms "
          + "later%n", stopped, victims.size(), served);
      // Where n3's part of that went, from its log (same clock).
      for (String step : List.of("failed an fsync", "Running CoordinatedShutdown", "Exiting completed",
          "storage engine stopped")) {
        log.lines().filter(l -> l.contains(step)).findFirst().ifPresent(l -> System.out.printf("  n3: %-28s %6d ms "
            + "after the switch%n", step, java.time.Duration.between(switchedAt,
            java.time.LocalTime.parse(l.substring(0, 12))).toMillis()));
      }
    }
  }

  /**
   * The disk fails while the node has no write to make: a tablet it owns but never opened is
   * read, and its opening fails at the fsync of the tablet's first manifest. The node must stop
   * then, not at its commit log's next sync, which no write comes to make: it would otherwise
   * keep a tablet it cannot open, and every request for it would fail, for as long as it runs.
   */
  @Test
  void aNodeWhoseDiskRefusesFsyncStopsWhenATabletFailsToOpenThoughNoWriteReachesItsLog() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      NodeJvm n1 = cluster.add("n1");
      cluster.configure("tabula.node.storage-class = \"" + FsyncRefusingStorage.class.getName() + "\"\n");
      NodeJvm n2 = cluster.add("n2");
      cluster.configure("");
      ClusterFixture.createTable(n1, "t", List.of("k1", "k2", "k3", "k4", "k5"));
      Map<String, String[]> placed = Workload.awaitPlacement(n1, Set.of("n1", "n2"), Duration.ofSeconds(60),
          t -> t.values().stream().anyMatch(o -> o[0].equals("n2")));
      int range = new ArrayList<>(placed.values()).indexOf(placed.values().stream()
          .filter(o -> o[0].equals("n2")).findFirst().orElseThrow());
      String row = "k" + range + "-never-written";
      long failedAt = System.nanoTime();
      Files.createFile(cluster.root.resolve(FsyncRefusingStorage.SWITCH));
      try (var c = ClusterFixture.data(n1, Duration.ofSeconds(5))) {
        c.readRow(Workload.T, row);
      } catch (com.google.api.gax.rpc.ApiException e) {
        // Its tablet could not be opened on n2; what matters is that n2 stops.
      }
      assertTrue(n2.awaitExit(Duration.ofSeconds(60)), "n2 still runs 60 s after a tablet's opening failed an "
          + "fsync; its log:\n" + n2.tail(60));
      long stopped = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failedAt);
      try (var c = ClusterFixture.data(n1)) {
        assertEquals(null, c.readRow(Workload.T, row), "the row's tablet serves on n1");
      }
      String log = n2.tail(100_000);
      assertEquals(1, log.split("failed an fsync", -1).length - 1, "n2 logs the failed fsync once; its log:\n"
          + n2.tail(80));
      assertTrue(log.contains("StorageSyncFailedException") && log.contains("MANIFEST"),
          "with the stack, naming the tablet's manifest; its log:\n" + n2.tail(80));
      System.out.printf("n2's disk refused fsync as a tablet opened: n2 stopped %d ms later%n", stopped);
    }
  }
}
