package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.tabula.client.MutationResult;
import io.tabula.client.Query;
import io.tabula.client.RetrySettings;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.client.TabulaException;
import io.tabula.cluster.NodeProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client riding over a node that is killed with SIGKILL and started again on the same
 * port and data directory, with real processes: idempotent writes and reads issued while the
 * node is down are retried until it is back and succeed; a write at the server's time is
 * tried once and fails; a scan that was open when the node died resumes after the last row
 * it delivered (TabulaClient resumes scans on retryable codes), so its subscriber gets every
 * row exactly once, in order, including the rows written while the node was down, which
 * only the restarted node can serve; every acknowledged write reads back.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class NodeRestartRetryTest {
  private static final String TABLE = "restart";
  /**
   * 12 MB written before the kill: more than the 3 to 8 MB a paused scan has in flight (measured
   * here and in ScanFlowTest), so the scan cannot have received the whole table from the first node.
   */
  private static final int ROWS = 3_000;
  private static final int VALUE_BYTES = 4_000;
  private static final Duration START_WITHIN = Duration.ofSeconds(60);
  /** Up to 60 s per operation, waits growing to 500 ms: a node restart fits in. */
  private static final RetrySettings RIDE_OVER = new RetrySettings(0, Duration.ofMillis(10), Duration.ofMillis(500),
      2.0, Duration.ofSeconds(5), Duration.ofSeconds(60));

  @TempDir
  Path tmp;

  private final List<NodeProcess> nodes = new CopyOnWriteArrayList<>();
  private final ExecutorService restarter = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() throws InterruptedException {
    restarter.shutdownNow();
    assertTrue(restarter.awaitTermination(70, TimeUnit.SECONDS), "the restart did not finish");
    for (NodeProcess n : nodes) {
      n.close();
    }
  }

  @Test
  void idempotentCallsAndAnOpenScanRideOverAKilledAndRestartedNode() throws Exception {
    Path data = tmp.resolve("data");
    int port = NodeProcess.freePort();
    int httpPort = NodeProcess.freePort();
    NodeProcess first = start(data, port, httpPort, 1);
    boolean passed = false;
    try (TabulaClient client = TabulaClient.builder().endpoint("127.0.0.1:" + port).retry(RIDE_OVER).build()) {
      join(client.admin().createTable(TABLE, "f"));
      List<RowMutation> before = new ArrayList<>();
      for (int i = 0; i < ROWS; i++) {
        before.add(write(i));
      }
      long t0 = System.nanoTime();
      for (MutationResult r : join(client.applyBatch(TABLE, before))) {
        assertTrue(r.ok(), () -> "writing " + r.key().toStringUtf8() + ": " + r.error());
      }
      System.out.printf("NodeRestartRetryTest: wrote %,d rows in %d ms%n", ROWS,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));

      // A scan the subscriber has read 100 rows of, one at a time, and then pauses.
      CountingSubscriber scan = new CountingSubscriber();
      client.scan(Query.table(TABLE)).subscribe(scan);
      scan.awaitSubscription();
      for (int i = 0; i < 100; i++) {
        scan.request(1);
        assertEquals(key(i), scan.next().keyUtf8());
      }

      first.kill();
      long killedAt = System.nanoTime();
      CompletableFuture<NodeProcess> second = CompletableFuture.supplyAsync(() -> {
        sleep(1_500);
        return start(data, port, httpPort, 2);
      }, restarter);

      // While the node is down: idempotent writes and reads, and one write at the server's time.
      List<CompletionStage<?>> calls = new ArrayList<>();
      for (int i = ROWS; i < ROWS + 20; i++) {
        calls.add(client.apply(TABLE, write(i)));
      }
      List<RowMutation> batch = new ArrayList<>();
      for (int i = ROWS + 20; i < ROWS + 40; i++) {
        batch.add(write(i));
      }
      CompletionStage<List<MutationResult>> batched = client.applyBatch(TABLE, batch);
      List<CompletionStage<Optional<Row>>> reads = new ArrayList<>();
      for (int i = 0; i < ROWS; i += 200) {
        reads.add(client.readRow(TABLE, key(i)));
      }
      CompletionStage<Void> serverTime = client.apply(TABLE, RowMutation.create("server-time")
          .setCell("f", "v", "now"));

      TabulaException once = assertInstanceOf(TabulaException.class, assertThrows(CompletionException.class,
          () -> join(serverTime)).getCause());
      assertEquals(Status.Code.UNAVAILABLE, once.code(), once.getMessage());
      assertFalse(once.getMessage().contains("attempts)"), "a server-time write is tried once: " + once);

      calls.forEach(NodeRestartRetryTest::join);
      for (MutationResult r : join(batched)) {
        assertTrue(r.ok(), () -> "batch entry " + r.key().toStringUtf8() + ": " + r.error());
      }
      for (int i = 0; i < reads.size(); i++) {
        Row r = join(reads.get(i)).orElseThrow();
        assertEquals(value(i * 200), r.cells().get(0).value(), "read of " + r.keyUtf8());
      }
      NodeProcess restarted = second.get(70, TimeUnit.SECONDS);
      System.out.printf("NodeRestartRetryTest: the calls issued while the node was down succeeded %d ms after "
          + "the kill%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
      assertTrue(restarted.process().isAlive());

      // The scan goes on. The client's gRPC layer first hands over the rows it had received
      // from the dead node (it reports a broken connection only behind them), so the scan
      // resumes only now that the subscriber asks for more, after the writes above were
      // acknowledged: the resumed read sees rows ROWS to ROWS + 39 too.
      for (int i = 100; i < ROWS + 40; i++) {
        scan.request(1);
        Row r = scan.next();
        assertEquals(key(i), r.keyUtf8(), "row " + i + " of the scan");
        if (i % 101 == 0 || i >= ROWS) {
          assertEquals(value(i), r.cells().get(0).value(), "value of row " + i + " of the scan");
        }
      }
      scan.request(1);
      scan.awaitCompletion();
      assertEquals(0, scan.excess.get(), "rows beyond the demand");

      List<Row> all = join(client.readRows(Query.table(TABLE)));
      assertEquals(ROWS + 40, all.size());
      for (int i = 0; i < all.size(); i++) {
        assertEquals(key(i), all.get(i).keyUtf8());
        assertEquals(value(i), all.get(i).cells().get(0).value(), "value of " + key(i));
      }
      passed = true;
    } finally {
      if (!passed) {
        printLogs();
      }
    }
  }

  private NodeProcess start(Path data, int port, int httpPort, int n) {
    try {
      NodeProcess node = NodeProcess.start(data, port, httpPort, tmp.resolve("node-" + n + ".log"));
      nodes.add(node);
      long t0 = System.nanoTime();
      node.awaitListening(START_WITHIN);
      System.out.printf("NodeRestartRetryTest: node %d listening on port %d after %d ms%n", n, port,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
      return node;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting node " + n, e);
    }
  }

  private void printLogs() {
    for (NodeProcess n : nodes) {
      try {
        System.out.println("===== " + n.log().getFileName() + " =====\n" + Files.readString(n.log()));
      } catch (IOException e) {
        System.out.println("(cannot read " + n.log() + ": " + e + ")");
      }
    }
  }

  private static String key(int i) {
    return String.format("row%05d", i);
  }

  private static ByteString value(int i) {
    byte[] b = new byte[VALUE_BYTES];
    for (int j = 0; j < b.length; j++) {
      b[j] = (byte) (i * 31 + j);
    }
    return ByteString.copyFrom(b);
  }

  /** Row i with an explicit timestamp: idempotent, so the client may retry it. */
  private static RowMutation write(int i) {
    return RowMutation.create(key(i)).setCell("f", ByteString.copyFromUtf8("v"), 1_000, value(i));
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static <T> T join(CompletionStage<T> stage) {
    return stage.toCompletableFuture().orTimeout(90, TimeUnit.SECONDS).join();
  }
}
