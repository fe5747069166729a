package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.TableId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node is started again under its name while its earlier process is only stopped, as a
 * supervisor does with a "hung" process or an orchestrator with a pod whose host it cannot
 * reach. Three nodes on one root; a writer keeping 64 writes in flight through n2 (rows over
 * every tablet, the official client); n2 is frozen ({@code SIGSTOP}); once its tablets serve on
 * n1 and n3, a new n2 is started (same name, same root, other ports); then the old process
 * resumes ({@code SIGCONT}) with the writer's requests queued on its port. The old life must
 * acknowledge nothing that recovery did not see: every write the writer saw acknowledged reads
 * back through n1, and the old process stops.
 *
 * <p>Proves the rule "one life per log folder: no life removes another's folder or fence marker"
 * of docs/fencing.md. Before it, the new life deleted the old life's log folder, its
 * {@code FENCED} marker included, as soon as no tablet named it; the old process then found no
 * fence, went on acknowledging writes into a log nobody would read, and this scenario lost
 * dozens of acknowledged rows.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class SameNameRestartTest {
  private static final TableId T = TableId.of("t");
  private static final int RANGES = 6;
  private static final int IN_FLIGHT = 64;

  @Test
  void aNodeStartedAgainUnderItsNameWhileTheOldProcessIsStoppedLosesNoAcknowledgedWrite() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      NodeJvm n1 = cluster.add("n1");
      cluster.add("n2");
      cluster.add("n3");
      NodeJvm n2 = cluster.node("n2");
      List<String> splits = new ArrayList<>();
      for (int i = 1; i < RANGES; i++) {
        splits.add("k" + i);
      }
      ClusterFixture.createTable(n1, "t", splits);
      Workload.awaitPlacement(n1, Set.of("n1", "n2", "n3"), Duration.ofSeconds(60),
          t -> t.values().stream().anyMatch(o -> o[0].equals("n2")));

      List<String> prefixes = new ArrayList<>();
      for (int i = 0; i < RANGES; i++) {
        prefixes.add("k" + i);
      }
      InFlightWriter writer = new InFlightWriter(n2, prefixes, IN_FLIGHT);
      writer.start();
      NodeJvm n2again;
      long resumedAt;
      try {
        Thread.sleep(3_000);
        long stoppedAt = System.nanoTime();
        n2.signal("STOP");
        int before = writer.acked().size();
        Workload.awaitPlacement(n1, Set.of("n1", "n3"), Duration.ofSeconds(90), t -> true);
        System.out.printf("n2 stopped after %d acknowledged writes; its tablets serve on n1 and n3 %d ms later%n",
            before, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt));
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
        Thread.sleep(Math.max(0, 15_000 - waited));
        n2again = cluster.add("n2");
        System.out.printf("a new n2 serves %d ms after the old one stopped%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt));
        int beforeResume = writer.acked().size();
        resumedAt = System.nanoTime();
        n2.signal("CONT");
        assertTrue(n2.awaitExit(Duration.ofSeconds(60)), "the old n2 still runs 60 s after it resumed; its log:\n"
            + n2.tail(60));
        System.out.printf("the old n2 stopped %d ms after it resumed, having acknowledged %d writes meanwhile%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumedAt), writer.acked().size() - beforeResume);
      } finally {
        writer.stop();
      }
      assertTrue(n2again.alive(), "the new n2 still runs");

      Set<String> read = new TreeSet<>();
      try (BigtableDataClient c = ClusterFixture.data(n1)) {
        for (Row r : c.readRows(Query.create(T))) {
          read.add(r.getKey().toStringUtf8());
        }
      }
      List<String> missing = new ArrayList<>();
      for (String k : writer.acked()) {
        if (!read.contains(k)) {
          missing.add(k);
        }
      }
      System.out.printf("%d writes acknowledged, %d failed or unknown, %d rows read back through n1%n",
          writer.acked().size(), writer.failed(), read.size());
      assertTrue(missing.isEmpty(), missing.size() + " acknowledged writes are missing: " + missing.stream().limit(20)
          .toList() + "\nthe old n2's log:\n" + n2.tail(60));
      String oldLog = n2.tail(100_000);
      assertTrue(oldLog.contains("is fenced") || oldLog.contains("Down"), "the old n2 stopped because it was fenced "
          + "or downed; its log:\n" + n2.tail(60));
    }
  }
}
