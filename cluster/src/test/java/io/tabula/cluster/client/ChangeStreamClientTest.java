package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.tabula.actors.master.TabletInfo;
import io.tabula.client.Change;
import io.tabula.client.GcPolicy;
import io.tabula.client.RetrySettings;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.cluster.TabulaNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Tabula client's change stream ({@link TabulaClient#readChangeStream}) against an in-JVM
 * node (docs/change-streams.md): one publisher follows every partition of a table whose
 * tablets split (small split threshold) and merge (cold ranges, quick merges) while it reads,
 * and sees every acknowledged write exactly once, in commit order per row; a value the node
 * sends in pieces arrives whole, and a stream with an end time completes; a stream resumes from
 * its last token over a node restart; cancelling ends every partition's stream on the node.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ChangeStreamClientTest {
  @TempDir
  Path dir;

  private static final Duration RETENTION = Duration.ofDays(1);

  /** Splits at 96 KiB of 16 KiB memtables, as SplitTest's; merges of cold tablets under 48 KiB after 3 s. */
  private static Map<String, Object> churning() {
    return Map.of("tabula.node.memtable-bytes", 16 * 1024,
        "tabula.tablet.split-bytes", 96 * 1024,
        "tabula.tablet.check-interval", "100ms",
        "tabula.master.merge.below-bytes", 48 * 1024,
        "tabula.master.merge.cold-for", "3s",
        "tabula.master.merge.cold-ops-per-second", 100_000);
  }

  private static List<byte[]> splits(String... rows) {
    List<byte[]> out = new ArrayList<>();
    for (String r : rows) {
      out.add(r.getBytes(StandardCharsets.UTF_8));
    }
    return out;
  }

  private static void createWithStream(TabulaClient client, String table, String... splitRows) {
    client.admin().createTable(table, Map.of("f", GcPolicy.never()), splits(splitRows), RETENTION)
        .toCompletableFuture().join();
  }

  @Test
  void aReaderFollowsSplitsAndMergesAndSeesEveryWriteOnceInOrderPerRow() throws Exception {
    try (InJvmNode node = InJvmNode.start(dir, RetrySettings.DEFAULT, churning())) {
      TabulaClient client = node.client;
      createWithStream(client, "events", "z1", "z2", "z3");
      assertEquals(RETENTION, client.admin().changeStreamRetention("events").toCompletableFuture().join());
      Collector seen = new Collector();
      client.readChangeStream("events", Instant.now()).subscribe(seen);
      Map<String, List<String>> written = new LinkedHashMap<>();
      String pad = "x".repeat(300);
      int n = 0;
      // The z ranges once, then only k rows: the k tablet splits, the z tablets go cold and merge.
      for (int z = 0; z < 4; z++) {
        write(client, written, "z" + z + "-row", "z" + z + "-" + n++, pad);
      }
      while (n < 1500) {
        write(client, written, String.format("k%04d", (n * 7919) % 600), "v" + n++, pad);
      }
      int splitInto = tablets(node, "events").size();
      await(() -> merged(node), 60, "the z tablets merged");
      // Written after the merge: read only by following the z tablets' CloseStreams into the merged partition.
      for (int z = 0; z < 4; z++) {
        write(client, written, "z" + z + "-row", "z" + z + "-" + n++, pad);
      }
      int total = n;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (seen.changes().size() < total && seen.failure() == null && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertNull(seen.failure(), () -> "the stream failed: " + seen.failure());
      assertTrue(splitInto >= 6, "the table split while it was read: " + splitInto + " tablets");

      Map<String, List<String>> got = new LinkedHashMap<>();
      Map<String, Instant> lastCommit = new HashMap<>();
      for (Change c : seen.changes()) {
        Change.SetCell q = (Change.SetCell) c.mutations().stream()
            .filter(m -> m instanceof Change.SetCell s && s.qualifier().toStringUtf8().equals("q")).findFirst()
            .orElseThrow();
        got.computeIfAbsent(c.keyUtf8(), r -> new ArrayList<>()).add(q.value().toStringUtf8());
        Instant before = lastCommit.put(c.keyUtf8(), c.commitTime());
        assertTrue(before == null || !c.commitTime().isBefore(before), "commit times of row " + c.keyUtf8()
            + " go back: " + before + " then " + c.commitTime());
      }
      List<String> differ = new ArrayList<>();
      written.forEach((row, values) -> {
        if (!values.equals(got.getOrDefault(row, List.of()))) {
          differ.add(row + ": wrote " + values + ", saw " + got.get(row));
        }
      });
      got.keySet().stream().filter(row -> !written.containsKey(row)).forEach(row -> differ.add(row + ": never written"));
      assertEquals(List.of(), differ.subList(0, Math.min(differ.size(), 10)), () -> differ.size() + " rows differ of "
          + written.size() + " (" + seen.changes().size() + " changes seen of " + total
          + "): every write once, in order per row, and nothing else");
      System.out.printf("ChangeStreamClientTest: %d writes seen once each across %d tablets, then a merge%n",
          total, splitInto);
      seen.cancel();
    }
  }

  @Test
  void aValueSentInPiecesArrivesWholeAndAStreamWithAnEndCompletes() throws Exception {
    try (InJvmNode node = InJvmNode.start(dir)) {
      TabulaClient client = node.client;
      createWithStream(client, "big");
      Instant from = Instant.now();
      byte[] value = new byte[3 << 20];
      new Random(7).nextBytes(value);
      client.apply("big", RowMutation.create("r").setCell("f", ByteString.copyFromUtf8("large"), 1_000,
          ByteString.copyFrom(value)).setCell("f", ByteString.copyFromUtf8("small"), 1_000,
          ByteString.copyFromUtf8("s")).deleteCells("f", "old")).toCompletableFuture().join();
      client.apply("big", RowMutation.create("r").deleteFamily("f")).toCompletableFuture().join();
      Instant until = Instant.now().plusMillis(500);

      Collector seen = new Collector();
      client.readChangeStream("big", from, until).subscribe(seen);
      assertTrue(seen.completed.await(30, TimeUnit.SECONDS), "the stream completes at its end time");
      assertNull(seen.failure());
      List<Change> changes = seen.changes();
      assertEquals(2, changes.size(), () -> "changes: " + changes);
      assertEquals(List.of(new Change.SetCell("f", ByteString.copyFromUtf8("large"), 1_000, ByteString.copyFrom(value)),
          new Change.SetCell("f", ByteString.copyFromUtf8("small"), 1_000, ByteString.copyFromUtf8("s")),
          new Change.DeleteCells("f", ByteString.copyFromUtf8("old"), 0, 0)), changes.get(0).mutations());
      assertEquals(List.of(new Change.DeleteFamily("f")), changes.get(1).mutations());
      assertTrue(changes.get(0).commitTime().isBefore(changes.get(1).commitTime()));
    }
  }

  @Test
  void aStreamResumesFromItsLastTokenOverANodeRestart() throws Exception {
    RetrySettings rideOver = new RetrySettings(0, Duration.ofMillis(10), Duration.ofMillis(500), 2.0,
        Duration.ofSeconds(5), Duration.ofSeconds(60));
    Path data = dir.resolve("data");
    TabulaNode first = TabulaNode.start(data, 0, 0);
    int port = first.grpcPort();
    boolean firstClosed = false;
    TabulaNode second = null;
    try (TabulaClient client = TabulaClient.builder().endpoint(InJvmNode.endpoint(first)).retry(rideOver).build()) {
      createWithStream(client, "t", "m");
      Collector seen = new Collector();
      client.readChangeStream("t", Instant.now()).subscribe(seen);
      List<String> written = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        written.add(writeOne(client, "t", i));
      }
      await(() -> seen.changes().size() == 20, 30, "the writes before the restart seen");
      first.close();
      firstClosed = true;
      second = TabulaNode.start(data, port, 0);
      for (int i = 20; i < 40; i++) {
        written.add(writeOne(client, "t", i));
      }
      await(() -> seen.changes().size() >= 40 || seen.failure() != null, 60, "the writes after the restart seen");
      assertNull(seen.failure(), () -> "the stream failed: " + seen.failure());
      assertEquals(written, seen.changes().stream().map(Change::keyUtf8).sorted().toList(),
          "each write once, from before the restart and after it");
      seen.cancel();
    } finally {
      if (second != null) {
        second.close();
      }
      if (!firstClosed) {
        first.close();
      }
    }
  }

  @Test
  void cancellingEndsEveryPartitionsStreamOnTheNode() throws Exception {
    try (InJvmNode node = InJvmNode.start(dir)) {
      TabulaClient client = node.client;
      createWithStream(client, "c", "g", "p");
      Collector seen = new Collector();
      client.readChangeStream("c", Instant.now()).subscribe(seen);
      writeOne(client, "c", 1);
      await(() -> seen.changes().size() == 1, 30, "a change seen");
      assertEquals(3, NodeStreams.runningChangeStreams(node.node.system()), "one stream per partition");
      seen.cancel();
      assertEquals(0, NodeStreams.awaitNoChangeStream(node.node.system()), "a partition's stream outlived the cancel");
    }
  }

  private static void write(TabulaClient client, Map<String, List<String>> written, String row, String value,
      String pad) {
    client.apply("events", RowMutation.create(row).setCell("f", "q", value).setCell("f", "pad", pad))
        .toCompletableFuture().join();
    written.computeIfAbsent(row, r -> new ArrayList<>()).add(value);
  }

  /** Writes one cell of row {@code r<i>} of {@code table}; answers the row key. */
  private static String writeOne(TabulaClient client, String table, int i) {
    String key = String.format("r%03d", i);
    // With a timestamp: idempotent, so retried while the node restarts.
    client.apply(table, RowMutation.create(key).setCell("f", "q", 1_000, "v" + i)).toCompletableFuture().join();
    return key;
  }

  private static List<TabletInfo> tablets(InJvmNode node, String table) {
    return node.node.directory().tablets().getOrDefault(table, List.of());
  }

  /** True once a tablet of {@code events} no longer starts at z1, z2 or z3: a z tablet was merged. */
  private static boolean merged(InJvmNode node) {
    return !tablets(node, "events").stream().map(t -> new String(t.startRow(), StandardCharsets.UTF_8))
        .toList().containsAll(List.of("z1", "z2", "z3"));
  }

  private static void await(BooleanSupplier done, int seconds, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waited " + seconds + " s for " + what);
      }
      Thread.sleep(100);
    }
  }

  /** A subscriber that asks for everything and keeps what it gets. */
  private static final class Collector implements Flow.Subscriber<Change> {
    private final List<Change> changes = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicReference<Flow.Subscription> subscription = new AtomicReference<>();
    final CountDownLatch completed = new CountDownLatch(1);

    @Override
    public void onSubscribe(Flow.Subscription s) {
      subscription.set(s);
      s.request(Long.MAX_VALUE);
    }

    @Override
    public synchronized void onNext(Change c) {
      changes.add(c);
    }

    @Override
    public void onError(Throwable t) {
      failure.set(t);
    }

    @Override
    public void onComplete() {
      completed.countDown();
    }

    synchronized List<Change> changes() {
      return new ArrayList<>(changes);
    }

    Throwable failure() {
      return failure.get();
    }

    void cancel() {
      subscription.get().cancel();
    }
  }
}
