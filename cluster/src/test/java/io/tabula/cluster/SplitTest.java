package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.rpc.ServerStream;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.KeyOffset;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.RowMutationEntry;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.conformance.ConformancePeer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Automatic splits on one in-JVM node, seen through the official client: a table written
 * past a (tiny) split threshold ends up in several tablets, every row stays readable and
 * writable, and scans running while the splits happen return every row once, in order.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SplitTest {
  private static final int ROWS = 3000;

  @TempDir
  Path dir;

  private TabulaNode node;
  private BigtableDataClient data;
  private BigtableTableAdminClient admin;

  @AfterEach
  void stop() {
    if (data != null) {
      data.close();
    }
    if (admin != null) {
      admin.close();
    }
    if (node != null) {
      node.close();
    }
  }

  private static String key(int i) {
    return String.format("row%05d", i);
  }

  private void startSplittingNode() throws Exception {
    node = TabulaNode.start(ConfigFactory.parseMap(Map.of(
        "tabula.node.data-dir", dir.toString(),
        "tabula.node.grpc-port", 0,
        "tabula.node.http-port", 0,
        "tabula.node.memtable-bytes", 16 * 1024,
        "tabula.tablet.split-bytes", 96 * 1024,
        "tabula.tablet.check-interval", "100ms")));
    data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()));
    admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
    admin.createTable(CreateTableRequest.of("t").addFamily("f"));
  }

  @Test
  void aGrowingTableSplitsAndScansDuringSplitsSeeEveryRowOnce() throws Exception {
    startSplittingNode();

    Random random = new Random(7);
    byte[] value = new byte[300];
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      order.add(i);
    }
    java.util.Collections.shuffle(order, random);
    TreeSet<String> written = new TreeSet<>();
    for (int batch = 0; batch < ROWS / 100; batch++) {
      BulkMutation bulk = BulkMutation.create(TableId.of("t"));
      for (int j = 0; j < 100; j++) {
        random.nextBytes(value);
        String k = key(order.get(batch * 100 + j));
        bulk.add(RowMutationEntry.create(k).setCell("f", ByteString.copyFromUtf8("q"), 1000,
            ByteString.copyFrom(value)));
        written.add(k);
      }
      data.bulkMutateRows(bulk);
      if (batch % 5 == 4) {
        // Taken while tablets split: every row written so far, once each, in order.
        assertEquals(new ArrayList<>(written), scanKeys(), "a scan after " + written.size() + " rows");
        // Asks every tablet: one that has just split answers "moved", and the node asks again.
        assertWellFormed(data.sampleRowKeys("t"));
      }
    }
    awaitTablets(3);
    assertWellFormed(data.sampleRowKeys("t"));

    List<String> all = scanKeys();
    assertEquals(ROWS, all.size(), "every row once after the splits");
    for (int i = 0; i < ROWS; i++) {
      assertEquals(key(i), all.get(i));
    }
    // Both sides of every split take writes and point reads.
    for (int i = 0; i < ROWS; i += 97) {
      data.mutateRow(RowMutation.create(TableId.of("t"), key(i)).setCell("f", "after", "split"));
    }
    for (int i = 0; i < ROWS; i += 97) {
      Row r = data.readRow(TableId.of("t"), key(i));
      assertEquals("split", r.getCells("f", "after").get(0).getValue().toStringUtf8());
    }
  }

  /**
   * Batches from several threads while tablets split under them: entries a splitting tablet
   * refuses go again to the children, and every entry lands exactly as written.
   */
  @Test
  void batchesInFlightDuringSplitsAllLand() throws Exception {
    startSplittingNode();
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        done.add(pool.submit(() -> {
          for (int batch = first; batch < ROWS / 50; batch += threads) {
            BulkMutation bulk = BulkMutation.create(TableId.of("t"));
            for (int j = 0; j < 50; j++) {
              int i = batch * 50 + j;
              bulk.add(RowMutationEntry.create(key(i)).setCell("f", ByteString.copyFromUtf8("q"), 1000,
                  ByteString.copyFrom(valueOf(i))));
            }
            data.bulkMutateRows(bulk);
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    awaitTablets(3);
    int seen = 0;
    for (Row r : data.readRows(Query.create(TableId.of("t")))) {
      int i = Integer.parseInt(r.getKey().toStringUtf8().substring(3));
      assertEquals(key(seen), r.getKey().toStringUtf8(), "rows in order, each once");
      assertEquals(1, r.getCells().size());
      assertEquals(ByteString.copyFrom(valueOf(i)), r.getCells().get(0).getValue());
      seen++;
    }
    assertEquals(ROWS, seen);
  }

  /** 300 bytes that differ from row to row. */
  private static byte[] valueOf(int i) {
    byte[] v = new byte[300];
    new Random(i).nextBytes(v);
    return v;
  }

  /** Waits up to a minute for the table to have split into at least {@code n} tablets. */
  private void awaitTablets(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    List<KeyOffset> samples = data.sampleRowKeys("t");
    while (samples.size() < n && System.nanoTime() < deadline) {
      Thread.sleep(200);
      samples = data.sampleRowKeys("t");
    }
    assertTrue(samples.size() >= n, "the table split into at least " + n + " tablets: " + samples);
  }

  /**
   * Split points as a client uses them: tablets' end rows in increasing order, each inside
   * the data written, then the empty key; the byte offsets never shrink.
   */
  private static void assertWellFormed(List<KeyOffset> samples) {
    assertFalse(samples.isEmpty());
    assertEquals(ByteString.EMPTY, samples.get(samples.size() - 1).getKey(), "the last sample is the empty key");
    for (int i = 0; i < samples.size() - 1; i++) {
      String k = samples.get(i).getKey().toStringUtf8();
      assertTrue(k.compareTo(key(0)) > 0 && k.compareTo(key(ROWS)) <= 0, "a split point inside the rows: " + k);
      if (i > 0) {
        assertTrue(samples.get(i - 1).getKey().toStringUtf8().compareTo(k) < 0, "split points increase: " + samples);
        assertTrue(samples.get(i - 1).getOffsetBytes() <= samples.get(i).getOffsetBytes(), "offsets grow: " + samples);
      }
    }
  }

  private List<String> scanKeys() {
    List<String> keys = new ArrayList<>();
    ServerStream<Row> rows = data.readRows(Query.create(TableId.of("t")));
    for (Row r : rows) {
      keys.add(r.getKey().toStringUtf8());
    }
    return keys;
  }
}
