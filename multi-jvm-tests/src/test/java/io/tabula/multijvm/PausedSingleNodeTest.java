package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A single node paused longer than the master lease's timeout (a laptop's sleep, a long GC, a
 * starved VM) gives its master lease up, and its master starts again on the same node: the
 * node stays the cluster's oldest member. Pekko's singleton proxy looks for a new singleton
 * only when the oldest member changes, so every message to the master waited in its buffer
 * for good: no table could be created and no tablet opened until the process was restarted.
 * Tabula's own proxy ({@code MasterProxy}) looks again as soon as the master it knew stops.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class PausedSingleNodeTest {
  /** Longer than tabula.master-lease.heartbeat-timeout (5 s), so the lease is given up. */
  private static final Duration PAUSE = Duration.ofSeconds(9);
  /** What FileLease logs when its holder finds it was not renewed in time. */
  private static final String LEASE_LOST = "] lost by ";

  @Test
  void aNodePausedPastItsMasterLeaseServesAdminAndDataCallsAgain() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      NodeJvm n1 = cluster.add("n1");
      ClusterFixture.createTable(n1, "before", List.of("m"));
      try (BigtableDataClient data = ClusterFixture.data(n1)) {
        data.mutateRow(RowMutation.create("before", "a").setCell("f", "q", "1"));
      }

      n1.signal("STOP");
      Thread.sleep(PAUSE.toMillis());
      n1.signal("CONT");
      long resumed = System.nanoTime();
      long logDeadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!n1.logContains(LEASE_LOST) && System.nanoTime() < logDeadline) {
        Thread.sleep(200);
      }
      assertTrue(n1.logContains(LEASE_LOST), "n1 gave its master lease up during the pause");

      // The master is reached again: a table is created (the master's journal), its tablets
      // open (the master records the openings), and the old table serves reads and writes.
      String created = null;
      Exception last = null;
      while (created == null && System.nanoTime() - resumed < Duration.ofSeconds(60).toNanos()) {
        try (BigtableTableAdminClient admin = ClusterFixture.admin(n1)) {
          admin.createTable(CreateTableRequest.of("after").addFamily("f"));
          created = "after";
        } catch (Exception e) {
          last = e;
          Thread.sleep(1_000);
        }
      }
      double seconds = (System.nanoTime() - resumed) / 1e9;
      System.out.printf("PausedSingleNode: paused %d s; a table created %.1f s after the resume%n",
          PAUSE.toSeconds(), seconds);
      assertEquals("after", created, "a table is created within 60 s of the resume; last failure: " + last);
      try (BigtableDataClient data = ClusterFixture.data(n1)) {
        data.mutateRow(RowMutation.create("after", "x").setCell("f", "q", "2"));
        data.mutateRow(RowMutation.create("before", "z").setCell("f", "q", "3"));
        Row a = data.readRow("before", "a");
        Row x = data.readRow("after", "x");
        Row z = data.readRow("before", "z");
        assertTrue(a != null && x != null && z != null, "rows written before and after the pause read back");
      }
    }
  }
}
