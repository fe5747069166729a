package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.core.ApiFuture;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A hot tablet splits on load, where its load is, and a half moves: two nodes, a table of one
 * tablet, 90% of the writes to rows "a000".."a099" (a narrow range at the start of the key
 * space) and the rest spread over "b".."z". With hot splits after 2 s of more than 200 rows/s,
 * the tablet splits at a row inside the hot range (the median of its sampled requests; the
 * middle of its bytes would be near "m"), the balancer places the halves on both nodes, the
 * master records the split as an operation, and every row written is read back.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class HotSplitTest {
  @Test
  void aHotTabletSplitsWhereItsLoadIsAndSpreads() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.configure("tabula.master.hot-split { for = 2s, min-ops-per-second = 200 }\n"
          + "tabula.master.balance-every = 2s\ntabula.master.moved-tablet-stays = 5s\n");
      cluster.add("n1");
      cluster.add("n2");
      ClusterFixture.createTable(cluster.node("n1"), "hot", List.of());
      for (NodeJvm n : cluster.nodes) {
        n.awaitReady(Duration.ofSeconds(60));
      }
      Set<String> written = new TreeSet<>();
      AtomicLong acknowledged = new AtomicLong();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      boolean spread = false;
      try (BigtableDataClient data = ClusterFixture.data(cluster.node("n1"))) {
        Semaphore inFlight = new Semaphore(16);
        int n = 0;
        while (System.nanoTime() < deadline && !spread) {
          for (int i = 0; i < 500; i++, n++) {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            String key = r.nextInt(10) < 9 ? String.format("a%03d", r.nextInt(100))
                : (char) ('b' + r.nextInt(25)) + String.format("%05d", r.nextInt(100_000));
            synchronized (written) {
              written.add(key);
            }
            inFlight.acquire();
            ApiFuture<Void> f = data.mutateRowAsync(RowMutation.create(TableId.of("hot"), key).setCell("f", "q",
                "v" + n));
            f.addListener(() -> {
              inFlight.release();
              acknowledged.incrementAndGet();
            }, Runnable::run);
          }
          List<String[]> ranges = ClusterFixture.ranges(cluster.node("n2"), "hot");
          Set<String> owners = new TreeSet<>();
          ClusterFixture.tablets(cluster.node("n2"), "hot").values().forEach(o -> owners.add(o[0]));
          spread = ranges.size() >= 2 && owners.size() == 2;
        }
        assertTrue(inFlight.tryAcquire(16, 60, TimeUnit.SECONDS), "every write was answered");
        List<String[]> ranges = ClusterFixture.ranges(cluster.node("n2"), "hot");
        System.out.println("hot split test: " + acknowledged.get() + " writes; tablets now:");
        ranges.forEach(t -> System.out.println("  " + t[0] + " [" + t[1] + ", " + t[2] + ")"));
        assertTrue(spread, "within 90 s the hot tablet split and its halves serve on both nodes");
        // The bounds as the node prints them in JSON: a quoted string, its quotes escaped.
        String firstSplit = ranges.get(0)[2].replace("\\\"", "\"");
        assertTrue(firstSplit.startsWith("\"a0"), "the first split row is inside the hot range a000..a099 (the "
            + "middle of its load), not the middle of its bytes: " + firstSplit);
        String ops = cluster.node("n2").get("/tabula/operations").body();
        assertTrue(ops.contains("\"kind\":\"split\""), "the split is among the master's recent operations: " + ops);
        int read = 0;
        for (Row row : data.readRows(Query.create(TableId.of("hot")))) {
          assertTrue(written.contains(row.getKey().toStringUtf8()), "only rows written: " + row.getKey());
          read++;
        }
        assertEquals(written.size(), read, "every row written is read back across the split");
      }
    }
  }
}
