package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.Backup;
import com.google.cloud.bigtable.admin.v2.models.CreateBackupRequest;
import com.google.cloud.bigtable.admin.v2.models.RestoreTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A backup taken under load in a cluster of three node processes (docs/backups.md): writers
 * through two nodes with the official client, each row two cells written at once; the table's
 * tablets splitting as they grow and a tablet moved while the backup is taken; the file sweep
 * running every second. The table is then deleted, its unnamed files swept, and the backup
 * restored into a new table through another node. That table holds every row acknowledged
 * before the backup began, none whose write began after it ended, both cells of every row it
 * has (no torn row), and nothing never written; and it reads the same rows after its backup is
 * deleted and the sweeps have run again.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class BackupUnderLoadTest {
  /** A write: its key, its value, and when it began and was acknowledged (System.nanoTime; 0: not acknowledged). */
  private record Write(String key, String value, long start, long end) {}

  @Test
  void aBackupUnderWritesSplitsAndAMoveRestoresExactlyItsMoment() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.configure(SplitsAndMergesTest.SMALL_TABLETS + """
          tabula.master.sweep-files-every = 1s
          tabula.master.sweep-files-grace = 20s
          """);
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      ClusterFixture.createTable(cluster.node("n1"), "t", List.of("k", "z1"));
      for (NodeJvm n : cluster.nodes) {
        n.awaitReady(java.time.Duration.ofSeconds(30));
      }
      Map<String, Write> writes = new ConcurrentHashMap<>();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> writers = new ArrayList<>();
      for (String via : List.of("n2", "n3")) {
        Thread w = new Thread(() -> write(cluster.node(via), via, writes, stop, failure), "writer-" + via);
        w.start();
        writers.add(w);
      }
      long began;
      long ended;
      Backup backup;
      String moved;
      try {
        Thread.sleep(6_000); // the written tablets grow past their split size and split
        Set<String> before = ClusterFixture.tablets(cluster.node("n1"), "t").keySet();
        // A move under way while the backup lists the tablets.
        moved = new ArrayList<>(before).get(0);
        String owner = ClusterFixture.tablets(cluster.node("n1"), "t").get(moved)[0];
        String to = owner.equals("n3") ? "n2" : "n3";
        System.out.println("moving " + moved + " from " + owner + " to " + to + ": "
            + cluster.node("n1").post("/tabula/tablets/" + moved + "/move?to=" + to).statusCode());
        try (BigtableTableAdminClient admin = ClusterFixture.admin(cluster.node("n2"))) {
          began = System.nanoTime();
          backup = admin.createBackup(CreateBackupRequest.of("tabula", "under-load").setSourceTableId("t")
              .setExpireTime(org.threeten.bp.Instant.now().plusSeconds(86_400)));
          ended = System.nanoTime();
        }
        System.out.printf("backup of %d tablets' worth (%d bytes) took %d ms; tablets before it: %d%n",
            before.size(), backup.getSizeBytes(), (ended - began) / 1_000_000, before.size());
        Thread.sleep(3_000);
      } finally {
        stop.set(true);
        for (Thread w : writers) {
          w.join(30_000);
        }
      }
      if (failure.get() != null) {
        throw new AssertionError("a writer failed", failure.get());
      }
      Set<String> after = ClusterFixture.tablets(cluster.node("n1"), "t").keySet();
      System.out.println("tablets after: " + after.size() + ", writes: " + writes.size());
      assertTrue(after.size() > 3, "the table split under the writes: " + after);

      try (BigtableTableAdminClient admin = ClusterFixture.admin(cluster.node("n3"))) {
        admin.deleteTable("t");
        // Long enough for sweeps to take every file of the deleted table that the backup does not name.
        Thread.sleep(25_000);
        admin.restoreTable(RestoreTableRequest.of("tabula", "under-load").setTableId("t-restored"));
      }
      Map<String, Row> restored = new HashMap<>();
      try (BigtableDataClient data = ClusterFixture.data(cluster.node("n1"))) {
        for (Row r : data.readRows(Query.create(TableId.of("t-restored")))) {
          restored.put(r.getKey().toStringUtf8(), r);
        }
      }
      int mustHave = 0;
      int mayHave = 0;
      List<String> problems = new ArrayList<>();
      for (Write w : writes.values()) {
        Row r = restored.get(w.key());
        if (w.end() != 0 && w.end() < began) {
          mustHave++;
          if (r == null) {
            problems.add(w.key() + ", acknowledged before the backup began, is missing");
          }
        } else if (w.start() > ended) {
          if (r != null) {
            problems.add(w.key() + ", written after the backup ended, is in it");
          }
        } else {
          mayHave++;
        }
        if (r != null) {
          List<RowCell> a = r.getCells("f", "a");
          List<RowCell> b = r.getCells("f", "b");
          if (a.size() != 1 || b.size() != 1 || !a.get(0).getValue().toStringUtf8().equals(w.value())
              || !b.get(0).getValue().toStringUtf8().equals(w.value())) {
            problems.add(w.key() + " is torn or wrong: " + r);
          }
        }
      }
      for (String key : new TreeSet<>(restored.keySet())) {
        if (!writes.containsKey(key)) {
          problems.add(key + " was never written");
        }
      }
      System.out.printf("restored %d rows: %d acknowledged before the backup began (all must be there), %d written"
          + " while it ran (either way), %d begun after it%n", restored.size(), mustHave, mayHave,
          writes.size() - mustHave - mayHave);
      assertTrue(mustHave > 100, "enough rows were written before the backup: " + mustHave);
      assertEquals(List.of(), problems.size() > 20 ? problems.subList(0, 20) : problems);

      // Without its backup the restored table names the files alone, in the deleted table's folders: they stay.
      try (BigtableTableAdminClient admin = ClusterFixture.admin(cluster.node("n2"))) {
        admin.deleteBackup("tabula", "under-load");
      }
      Thread.sleep(25_000);
      int again = 0;
      try (BigtableDataClient data = ClusterFixture.data(cluster.node("n3"))) {
        for (Row r : data.readRows(Query.create(TableId.of("t-restored")))) {
          again++;
        }
      }
      assertEquals(restored.size(), again, "the restored table reads the same rows after its backup is gone");
    }
  }

  /** Writes rows of two cells through {@code via} until {@code stop}, recording each. */
  private static void write(NodeJvm via, String name, Map<String, Write> writes, AtomicBoolean stop,
      AtomicReference<Throwable> failure) {
    String pad = "x".repeat(1000);
    String[] prefixes = {"a", "k", "z1"};
    try (BigtableDataClient c = ClusterFixture.data(via)) {
      for (int seq = 0; !stop.get(); seq++) {
        String key = prefixes[seq % 3] + "-" + name + "-" + String.format("%06d", seq);
        String value = key + pad;
        long start = System.nanoTime();
        writes.put(key, new Write(key, value, start, 0));
        try {
          c.mutateRow(RowMutation.create(TableId.of("t"), key).setCell("f", "a", 1000, value)
              .setCell("f", "b", 1000, value));
          writes.put(key, new Write(key, value, start, System.nanoTime()));
        } catch (com.google.api.gax.rpc.ApiException e) {
          // not acknowledged: in the backup or not, as it turned out
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      failure.compareAndSet(null, e);
    }
  }
}
