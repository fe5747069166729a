package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.RowMutationEntry;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Scenario 2: tablets moved back and forth between nodes (paper §5.2) while writers and a
 * scanner run through different nodes with the official client. Every acknowledged write
 * must read back afterwards; every scan taken during the moves must return each row once,
 * in order, including every row written before the moves began. Each move's unavailability
 * is measured from the client side: the longest a write to the moving tablet waited while
 * the move was under way.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class MovesUnderLoadTest {
  private static final List<String> SPLITS = List.of("k1", "k2", "k3", "k4", "k5");
  private static final TableId T = TableId.of("t");

  /** A write: which tablet range (0..5) it went to, when it started and ended (System.nanoTime), its key. */
  private record Write(int range, long start, long end, String key) {}

  @Test
  void movesUnderWritesAndScansLoseNothing() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      try (BigtableTableAdminClient admin = ClusterFixture.admin(cluster.node("n1"))) {
        CreateTableRequest create = CreateTableRequest.of("t").addFamily("f");
        SPLITS.forEach(s -> create.addSplit(ByteString.copyFromUtf8(s)));
        admin.createTable(create);
      }
      for (NodeJvm n : cluster.nodes) {
        n.awaitReady(Duration.ofSeconds(30));
      }
      Set<String> before = new TreeSet<>();
      try (BigtableDataClient c = ClusterFixture.data(cluster.node("n1"))) {
        BulkMutation bulk = BulkMutation.create(T);
        for (int i = 0; i < 600; i++) {
          String key = String.format("k%d-pre-%04d", i % 6, i);
          bulk.add(RowMutationEntry.create(key).setCell("f", "q", "p" + i));
          before.add(key);
        }
        c.bulkMutateRows(bulk);
      }

      AtomicBoolean stop = new AtomicBoolean();
      ConcurrentLinkedQueue<Write> acked = new ConcurrentLinkedQueue<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      for (String via : List.of("n2", "n3")) {
        threads.add(started("writer-" + via, () -> {
          try (BigtableDataClient c = ClusterFixture.data(cluster.node(via))) {
            for (int seq = 0; !stop.get(); seq++) {
              int range = seq % 6;
              String key = String.format("k%d-%s-%06d", range, via, seq);
              long start = System.nanoTime();
              c.mutateRow(RowMutation.create(T, key).setCell("f", "q", "w" + seq));
              acked.add(new Write(range, start, System.nanoTime(), key));
            }
          } catch (Throwable t) {
            failure.compareAndSet(null, t);
          }
        }));
      }
      List<Integer> scanSizes = Collections.synchronizedList(new ArrayList<>());
      threads.add(started("scanner", () -> {
        try (BigtableDataClient c = ClusterFixture.data(cluster.node("n1"))) {
          while (!stop.get()) {
            List<String> keys = new ArrayList<>();
            for (Row r : c.readRows(Query.create(T))) {
              keys.add(r.getKey().toStringUtf8());
            }
            List<String> sorted = new ArrayList<>(new TreeSet<>(keys));
            if (!sorted.equals(keys)) {
              throw new AssertionError("a scan during moves returned rows out of order or twice");
            }
            if (!keys.containsAll(before)) {
              throw new AssertionError("a scan during moves missed rows written before the moves");
            }
            scanSizes.add(keys.size());
          }
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }));

      List<long[]> moves = new ArrayList<>();
      List<String> ids = new ArrayList<>(ClusterFixture.tablets(cluster.node("n1"), "t").keySet());
      List<String> names = List.of("n1", "n2", "n3");
      try {
        for (int round = 0; round < 8; round++) {
          int range = round % ids.size();
          String id = ids.get(range);
          String owner = ClusterFixture.tablets(cluster.node("n1"), "t").get(id)[0];
          String to = names.get((names.indexOf(owner) + 1 + round % 2) % 3);
          long start = System.nanoTime();
          var answer = cluster.node(names.get(round % 3)).post("/tabula/tablets/" + id + "/move?to=" + to);
          assertEquals(202, answer.statusCode(), answer.body());
          awaitServingAt(cluster, id, to);
          moves.add(new long[] {range, start, System.nanoTime()});
          Thread.sleep(500);
          if (failure.get() != null) {
            break;
          }
        }
      } finally {
        stop.set(true);
        for (Thread t : threads) {
          t.join(60_000);
        }
      }
      if (failure.get() != null) {
        throw new AssertionError("a writer or the scanner failed during the moves", failure.get());
      }

      Set<String> all = new TreeSet<>(before);
      acked.forEach(w -> all.add(w.key()));
      List<String> read = new ArrayList<>();
      try (BigtableDataClient c = ClusterFixture.data(cluster.node("n3"))) {
        for (Row r : c.readRows(Query.create(T))) {
          read.add(r.getKey().toStringUtf8());
        }
      }
      assertEquals(new ArrayList<>(all), read, "every acknowledged write reads back, once, in order");
      assertTrue(scanSizes.size() >= 1, "at least one scan ran during the moves");

      List<Long> unavailableMs = new ArrayList<>();
      for (long[] m : moves) {
        long worst = 0;
        for (Write w : acked) {
          if (w.range() == m[0] && w.start() >= m[1] && w.start() <= m[2]) {
            worst = Math.max(worst, w.end() - w.start());
          }
        }
        unavailableMs.add(worst / 1_000_000);
      }
      List<Long> sorted = new ArrayList<>(unavailableMs);
      Collections.sort(sorted);
      System.out.printf("moves: %d; writes acknowledged: %d; scans during moves: %d%n", moves.size(), acked.size(),
          scanSizes.size());
      System.out.println("longest write wait on the moving tablet, per move (ms): " + unavailableMs);
      System.out.printf("move unavailability: p50 %d ms, max %d ms%n", sorted.get(sorted.size() / 2),
          sorted.get(sorted.size() - 1));
      assertTrue(sorted.get(sorted.size() - 1) < 10_000, "a move kept writes waiting 10 s or more: " + sorted);
    }
  }

  private static Thread started(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void awaitServingAt(ClusterFixture cluster, String id, String to) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      Map<String, String[]> t = ClusterFixture.tablets(cluster.node("n1"), "t");
      String[] o = t.get(id);
      if (o != null && o[0].equals(to) && o[1].equals("serving")) {
        return;
      }
      Thread.sleep(50);
    }
    fail("tablet " + id + " did not serve at " + to + " within 30 s");
  }
}
