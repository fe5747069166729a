package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.client.GcPolicy;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.RetrySettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tablet neither read nor written for {@code tabula.tablet.close-idle-after} closes (docs/
 * cluster.md, "Tablets open when first asked"): its memtable is flushed, its actor stops, and
 * the master records that no log holds it (the directory, as Management HTTP shows it, names no
 * log for it); its next request opens it again and finds every row written before, and so does
 * a read after a restart. A tablet written all along stays open. On one node in this JVM, with a
 * check every 100 ms and an idle limit of 3 s.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class IdleTabletsCloseTest {
  @TempDir
  Path dir;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void anIdleTabletClosesAndOpensAgainAtItsNextRequestWithItsRows() throws Exception {
    Map<String, Object> settings = Map.of("tabula.node.warm-up", "0s", "tabula.tablet.check-interval", "100ms",
        "tabula.tablet.close-idle-after", "3s");
    try (InJvmNode node = InJvmNode.start(dir, RetrySettings.DEFAULT, settings)) {
      node.client.admin().createTable("idle", Map.of("f", GcPolicy.maxVersions(1)), List.of())
          .toCompletableFuture().join();
      node.client.apply("idle", RowMutation.create("r1").setCell("f", "q", "v1")).toCompletableFuture().join();
      assertTrue(open(node), "a tablet just written is open: its node's log names it");

      // Written every 200 ms for 4 s: never idle for 3 s, so it stays open.
      for (int i = 0; i < 20; i++) {
        node.client.apply("idle", RowMutation.create("w" + i).setCell("f", "q", "x")).toCompletableFuture().join();
        Thread.sleep(200);
        assertTrue(open(node), "a tablet written every 200 ms closed");
      }

      long idleFrom = System.nanoTime();
      awaitClosed(node);
      long closedAfterMs = (System.nanoTime() - idleFrom) / 1_000_000;
      System.out.println("the idle tablet closed " + closedAfterMs + " ms after its last write");

      long asked = System.nanoTime();
      Row row = node.client.readRow("idle", "r1").toCompletableFuture().join().orElseThrow();
      System.out.println("its next read answered in " + (System.nanoTime() - asked) / 1_000_000 + " ms");
      assertEquals("v1", row.latest("f", "q").orElseThrow().valueUtf8(),
          "the row written before the close reads back");
      assertEquals(21, node.client.readRows(io.tabula.client.Query.table("idle")).toCompletableFuture().join().size(),
          "every row written before the close is there");
      assertTrue(open(node) || reopenedSoon(node), "the read opened the tablet again");
      awaitClosed(node);
    }
    try (InJvmNode node = InJvmNode.start(dir, RetrySettings.DEFAULT, settings)) {
      assertEquals(21, node.client.readRows(io.tabula.client.Query.table("idle")).toCompletableFuture().join().size(),
          "every row, after the node closed idle and started again");
    }
  }

  /**
   * Reads racing idle closes: 21 tablets with an idle limit of 1 s, read at random by four
   * clients for 15 s (each tablet about every 4 s), so tablets close and open again all along
   * and reads arrive while one closes (waiting in its shard, or refused as moved and retried).
   * Every read answers its row; closes were seen.
   */
  @Test
  void readsRacingIdleClosesAllAnswer() throws Exception {
    Map<String, Object> settings = Map.of("tabula.node.warm-up", "0s", "tabula.tablet.check-interval", "100ms",
        "tabula.tablet.close-idle-after", "1s");
    List<byte[]> splits = new java.util.ArrayList<>();
    for (int i = 1; i <= 20; i++) {
      splits.add(String.format("r%02d", i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    try (InJvmNode node = InJvmNode.start(dir, RetrySettings.DEFAULT, settings)) {
      node.client.admin().createTable("racing", Map.of("f", GcPolicy.maxVersions(1)), splits)
          .toCompletableFuture().join();
      for (int i = 0; i <= 20; i++) {
        String row = String.format("r%02d-row", i);
        node.client.apply("racing", RowMutation.create(row).setCell("f", "q", row)).toCompletableFuture().join();
      }
      java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
      java.util.concurrent.ConcurrentLinkedQueue<String> wrong = new java.util.concurrent.ConcurrentLinkedQueue<>();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      List<Thread> readers = new java.util.ArrayList<>();
      for (int t = 0; t < 4; t++) {
        Thread reader = new Thread(() -> {
          java.util.Random random = new java.util.Random();
          while (System.nanoTime() < until) {
            String row = String.format("r%02d-row", random.nextInt(21));
            try {
              String value = node.client.readRow("racing", row).toCompletableFuture().join()
                  .flatMap(r -> r.latest("f", "q")).map(c -> c.valueUtf8()).orElse("(none)");
              if (!value.equals(row)) {
                wrong.add(row + " read as " + value);
              }
              reads.incrementAndGet();
              Thread.sleep(random.nextInt(1500));
            } catch (InterruptedException e) {
              return;
            } catch (RuntimeException e) {
              wrong.add(row + " failed: " + e);
            }
          }
        });
        reader.start();
        readers.add(reader);
      }
      java.util.Map<String, Boolean> wasOpen = new java.util.HashMap<>();
      int closes = 0;
      while (System.nanoTime() < until) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"id\":\"([^\"]+)\"[^}]*?\"logs\":\\[([^\\]]*)\\]")
            .matcher(tablets(node, "racing"));
        while (m.find()) {
          boolean open = !m.group(2).isEmpty();
          if (Boolean.TRUE.equals(wasOpen.put(m.group(1), open)) && !open) {
            closes++;
          }
        }
        Thread.sleep(100);
      }
      for (Thread reader : readers) {
        reader.join(TimeUnit.SECONDS.toMillis(60));
      }
      System.out.println("racing idle closes: " + reads.get() + " reads, " + closes + " closes seen");
      assertEquals(List.of(), List.copyOf(wrong), "every read answers its row");
      assertTrue(closes >= 5, "tablets closed while being read at random (" + closes + " closes seen)");
    }
  }

  /** The tablet of table "idle" as the node's Management HTTP lists it. */
  private String tablet(InJvmNode node) throws Exception {
    return tablets(node, "idle");
  }

  /** The tablets of {@code table} as the node's Management HTTP lists them (JSON). */
  private String tablets(InJvmNode node, String table) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.node.httpPort()
        + "/tabula/tablets?table=" + table)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }

  /** Whether a log names the tablet: it was opened and has not been closed cleanly since. */
  private boolean open(InJvmNode node) throws Exception {
    String t = tablet(node);
    assertTrue(t.contains("\"logs\":["), t);
    return !t.contains("\"logs\":[]");
  }

  private void awaitClosed(InJvmNode node) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (open(node)) {
      assertTrue(System.nanoTime() < deadline, "the idle tablet did not close within 30 s: " + tablet(node));
      Thread.sleep(100);
    }
  }

  /** The directory copy shows the reopening a moment after the read was answered. */
  private boolean reopenedSoon(InJvmNode node) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!open(node)) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(50);
    }
    return true;
  }
}
