package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Scenario 5: splits and merges under concurrent writes and a scan spanning nodes. The
 * nodes run with small tablets (split past 192 KiB) and quick merges (tablets together under
 * 48 KiB, cold for 3 s; the scanner reads every row all the time, so here size alone decides
 * what is cold). Writers fill the {@code k} range, whose tablet splits again and
 * again (the children spread over the nodes by the balancer); the {@code z} ranges, split in
 * four at creation and written only at first, go cold and are merged (moved to one node
 * first where needed). A scan runs throughout; every row reads back once, in order. The
 * master sweeps unreferenced SSTables every second with a 3 s grace, so the files splits and
 * merges leave shared are deleted once no tablet names them (once writes pause, the tablets
 * compact their files into one each); the table reads back whole again afterwards, so nothing a
 * tablet still needed went.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class SplitsAndMergesTest {
  private static final Set<String> INITIAL_Z = Set.of("t-3", "t-4", "t-5", "t-6");
  /** Tablets that split past 192 KiB and merge below 48 KiB once cold for 3 s; balancing every 2 s. */
  static final String SMALL_TABLETS = """
      tabula.tablet.split-bytes = 192KiB
      tabula.tablet.check-interval = 500ms
      tabula.master.balance-every = 2s
      tabula.master.moved-tablet-stays = 3s
      tabula.master.merge.below-bytes = 48KiB
      tabula.master.merge.cold-for = 3s
      tabula.master.merge.cold-ops-per-second = 100000
      """;

  @Test
  void tabletsSplitAndMergeUnderLoadAcrossNodes() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.configure(SMALL_TABLETS + """
          tabula.master.sweep-files-every = 1s
          tabula.master.sweep-files-grace = 3s
          """);
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      // Tablets: ["", k) t-1, [k, z1) t-2, then the cold z ranges t-3..t-6.
      Workload load = Workload.create(cluster, cluster.node("n1"), List.of("k", "z1", "z2", "z3", "z4"),
          List.of("k", "z1", "z2", "z3", "z4"), 100)
          .start(List.of(cluster.node("n2"), cluster.node("n3")), cluster.node("n1"), 1, 1024);
      Map<String, String[]> seen;
      try {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
          seen = ClusterFixture.tablets(cluster.node("n1"), "t");
          long splitChildren = seen.keySet().stream().filter(id -> !id.matches("t-[1-6]")).count();
          long zLeft = seen.keySet().stream().filter(INITIAL_Z::contains).count();
          if (splitChildren >= 4 && zLeft <= 2 || System.nanoTime() > deadline || load.failure() != null) {
            System.out.printf("tablets now: %d (%d made by splits or merges), of the four cold z tablets %d left%n",
                seen.size(), splitChildren, zLeft);
            assertTrue(splitChildren >= 4, "the written range split: " + seen.keySet());
            assertTrue(zLeft <= 2, "the cold tablets merged: " + seen.keySet());
            break;
          }
          Thread.sleep(500);
        }
        Workload.awaitPlacement(cluster.node("n1"), Set.of("n1", "n2", "n3"), Duration.ofSeconds(60), t -> true);
      } finally {
        load.stop();
      }
      load.verify(cluster.node("n2"));
      // Once writes pause, the tablets compact their files into one each (QuietCompaction), so
      // no child names its parent's shared files any more, and the sweep takes them after its grace.
      int deleted = 0;
      long sweepDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (deleted == 0 && System.nanoTime() < sweepDeadline) {
        Thread.sleep(1_000);
        java.util.regex.Matcher swept = java.util.regex.Pattern.compile("deleted (\\d+) SSTables no tablet "
            + "references").matcher(cluster.node("n1").tail(1_000_000));
        while (swept.find()) {
          deleted += Integer.parseInt(swept.group(1));
        }
      }
      System.out.printf("the master's sweep deleted %d SSTables that splits and merges had left shared%n", deleted);
      assertTrue(deleted > 0, "the master swept the files the splits and merges left shared");
      load.verify(cluster.node("n3"));
      long owners = seen.values().stream().map(o -> o[0]).distinct().count();
      assertTrue(owners >= 2, "the tablets are spread over nodes: " + owners);
    }
  }
}
