package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import com.google.api.gax.retrying.RetrySettings;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.cloud.bigtable.data.v2.stub.EnhancedBigtableStubSettings;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durability with real processes: a node runs as its own JVM ({@code tabula server}), the
 * official clients write to it over 127.0.0.1, and the process is killed with SIGKILL at a
 * random moment while writes are in flight. After each restart on the same data directory
 * every write the node acknowledged, in every earlier round, must read back with its value.
 * A last round stops the node with SIGTERM, which must run coordinated shutdown and exit.
 *
 * <p>The kill moment comes from a seeded {@link Random}; the seed is printed and can be
 * fixed with {@code -Dtabula.durability.seed=N}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class KillNineDurabilityTest {
  private static final String LOOPBACK = "127.0.0.1";
  private static final String PROJECT = "p";
  private static final String INSTANCE = "i";
  private static final String TABLE = "durability";
  private static final String FAMILY = "f";
  private static final int KILL_ROUNDS = 3;
  private static final int WRITERS = 4;
  private static final int IN_FLIGHT = 8;
  private static final Duration START_WITHIN = Duration.ofSeconds(60);
  private static final Duration CALL_DEADLINE = Duration.ofSeconds(5);
  private static final Duration READ_DEADLINE = Duration.ofSeconds(30);

  @TempDir
  Path tmp;

  private final List<Process> processes = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();
  /** Every acknowledged write of every round: row key to value. */
  private final Map<String, String> acknowledged = new ConcurrentHashMap<>();

  @AfterEach
  void stopProcesses() throws InterruptedException {
    for (Process p : processes) {
      if (p.isAlive()) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void acknowledgedWritesSurviveKillNineAndSigterm() throws Throwable {
    long seed = Long.getLong("tabula.durability.seed", System.nanoTime());
    System.out.println("KillNineDurabilityTest seed = " + seed + " (rerun with -Dtabula.durability.seed=" + seed + ")");
    Random random = new Random(seed);
    Path data = tmp.resolve("data");
    try {
      for (int round = 1; round <= KILL_ROUNDS; round++) {
        Node node = Node.start(this, data, round);
        try (Clients c = node.clients()) {
          if (round == 1) {
            c.admin.createTable(CreateTableRequest.of(TABLE).addFamily(FAMILY));
          }
          verify(c, "before the writes of round " + round);
          long killAfter = 300 + random.nextInt(1201);
          // The random moment counts from the first acknowledged write, so a slow start (a loaded
          // machine) cannot leave a round without writes to check.
          Writes w = writeUntil(c, round, acked -> {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (acked.get() == 0 && System.nanoTime() < until) {
              sleep(10);
            }
            sleep(killAfter);
            node.process.destroyForcibly();
          });
          assertTrue(node.process.waitFor(15, TimeUnit.SECONDS), "the killed node did not go away");
          System.out.printf("round %d: SIGKILL after %d ms; %d writes acknowledged, %d failed or in flight%n",
              round, killAfter, w.acked, w.failed);
          assertTrue(w.acked > 0, "round " + round + " acknowledged no writes before the kill");
        }
      }

      // SIGTERM round: writes finish, then a plain destroy() must run coordinated shutdown.
      Node node = Node.start(this, data, KILL_ROUNDS + 1);
      try (Clients c = node.clients()) {
        verify(c, "after " + KILL_ROUNDS + " kill -9 rounds");
        Writes w = writeUntil(c, KILL_ROUNDS + 1, acked -> sleep(500));
        assertEquals(0, w.failed, "writes failed while the node was up");
        System.out.printf("round %d: %d writes acknowledged, then SIGTERM%n", KILL_ROUNDS + 1, w.acked);
      }
      long t0 = System.nanoTime();
      node.process.destroy();
      assertTrue(node.process.waitFor(30, TimeUnit.SECONDS), "the node did not exit within 30 s of SIGTERM");
      String log = Files.readString(node.log);
      assertTrue(log.contains("Running CoordinatedShutdown"), "SIGTERM did not run coordinated shutdown");
      assertTrue(log.contains("storage engine closed"), "coordinated shutdown did not close the storage engine");
      System.out.printf("SIGTERM: exited in %d ms with code %d%n",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), node.process.exitValue());

      Node last = Node.start(this, data, KILL_ROUNDS + 2);
      try (Clients c = last.clients()) {
        verify(c, "after SIGTERM");
      }
      last.process.destroy();
      assertTrue(last.process.waitFor(30, TimeUnit.SECONDS), "the node did not exit within 30 s of SIGTERM");
    } catch (Throwable t) {
      printLogs();
      throw t;
    }
  }

  /** Reads the whole table and checks every acknowledged write is there with its value. */
  private void verify(Clients c, String when) {
    Map<String, String> rows = new HashMap<>();
    for (Row row : c.data.readRows(Query.create(TableId.of(TABLE)))) {
      List<RowCell> cells = row.getCells(FAMILY, "c");
      rows.put(row.getKey().toStringUtf8(), cells.isEmpty() ? null : cells.get(0).getValue().toStringUtf8());
    }
    List<String> missing = new ArrayList<>();
    List<String> wrong = new ArrayList<>();
    for (Map.Entry<String, String> e : acknowledged.entrySet()) {
      String got = rows.get(e.getKey());
      if (!rows.containsKey(e.getKey())) {
        missing.add(e.getKey());
      } else if (!e.getValue().equals(got)) {
        wrong.add(e.getKey() + "=" + got);
      }
    }
    System.out.printf("%s: %d acknowledged writes verified (%d rows in the table)%n", when, acknowledged.size(),
        rows.size());
    if (!missing.isEmpty() || !wrong.isEmpty()) {
      fail(when + ": " + missing.size() + " of " + acknowledged.size() + " acknowledged rows missing "
          + sample(missing) + ", " + wrong.size() + " with a wrong value " + sample(wrong));
    }
  }

  private static String sample(List<String> keys) {
    return keys.stream().sorted().limit(10).toList().toString();
  }

  private record Writes(int acked, int failed) {}

  /**
   * Runs {@link #WRITERS} writers with unique keys while {@code during} runs on this thread
   * (given the count of acknowledged writes),
   * then stops them. A key counts as acknowledged only once its MutateRow succeeded.
   */
  private Writes writeUntil(Clients c, int round, Consumer<AtomicInteger> during) throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger acked = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    List<Thread> writers = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      int writer = w;
      Thread t = new Thread(() -> {
        // Up to IN_FLIGHT writes outstanding per writer, so a kill lands on a batch of them.
        Semaphore window = new Semaphore(IN_FLIGHT);
        try {
          for (int i = 0; !stop.get(); i++) {
            if (!window.tryAcquire(CALL_DEADLINE.toMillis() + 1000, TimeUnit.MILLISECONDS)) {
              continue;
            }
            String key = String.format("r%d-w%d-%07d", round, writer, i);
            String value = "value-of-" + key;
            ApiFuture<Void> f = c.data.mutateRowAsync(
                RowMutation.create(TableId.of(TABLE), key).setCell(FAMILY, "c", value));
            ApiFutures.addCallback(f, new ApiFutureCallback<Void>() {
              @Override
              public void onSuccess(Void v) {
                acknowledged.put(key, value);
                acked.incrementAndGet();
                window.release();
              }

              @Override
              public void onFailure(Throwable e) {
                failed.incrementAndGet();
                window.release();
              }
            }, MoreExecutors.directExecutor());
          }
          // Wait for the outstanding writes to settle (succeed, fail or time out).
          window.tryAcquire(IN_FLIGHT, CALL_DEADLINE.toMillis() + 2000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "writer-" + round + "-" + w);
      t.setDaemon(true);
      t.start();
      writers.add(t);
    }
    try {
      during.accept(acked);
    } finally {
      stop.set(true);
      for (Thread t : writers) {
        t.join(CALL_DEADLINE.toMillis() + 8000);
        assertTrue(!t.isAlive(), "a writer did not stop");
      }
    }
    return new Writes(acked.get(), failed.get());
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void printLogs() {
    for (Path log : logs) {
      System.out.println("===== node output " + log.getFileName() + " =====");
      try {
        System.out.println(Files.readString(log));
      } catch (IOException e) {
        System.out.println("(cannot read: " + e + ")");
      }
    }
  }

  /** One {@code tabula server} process. */
  private record Node(Process process, int port, Path log) {
    /**
     * Starts node {@code n} and waits until it serves. Its ports are picked free just before, and
     * another socket (its own cluster port, say) may take one first: a node that exits because a
     * port was taken is started again on other ports, up to three times.
     */
    static Node start(KillNineDurabilityTest test, Path data, int n) throws Exception {
      for (int attempt = 1; ; attempt++) {
        int port = NodeProcess.freePort();
        int httpPort = NodeProcess.freePort();
        Path log = test.tmp.resolve("node-" + n + (attempt == 1 ? "" : "-" + attempt) + ".log");
        test.logs.add(log);
        Process p = NodeProcess.start(data, port, httpPort, log).process();
        test.processes.add(p);
        Node node = new Node(p, port, log);
        long t0 = System.nanoTime();
        try {
          node.awaitServing();
        } catch (AssertionError e) {
          if (attempt >= 3 || p.isAlive() || !Files.readString(log).contains("Address already in use")) {
            throw e;
          }
          System.out.printf("node %d: a port was taken before it bound; starting it again on other ports%n", n);
          continue;
        }
        System.out.printf("node %d serving on 127.0.0.1:%d after %d ms%n", n, port,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        return node;
      }
    }

    /** Polls ListTables with the official admin client until it answers (bounded). */
    private void awaitServing() throws Exception {
      long deadline = System.nanoTime() + START_WITHIN.toNanos();
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(adminSettings(port, Duration.ofSeconds(2)))) {
        while (true) {
          if (!process.isAlive()) {
            fail("the node exited with code " + process.exitValue() + " before serving");
          }
          try {
            admin.listTables();
            return;
          } catch (RuntimeException e) {
            if (System.nanoTime() > deadline) {
              fail("the node did not serve on port " + port + " within " + START_WITHIN + ": " + e);
            }
            Thread.sleep(200);
          }
        }
      }
    }

    Clients clients() throws IOException {
      return new Clients(BigtableDataClient.create(dataSettings(port)),
          BigtableTableAdminClient.create(adminSettings(port, CALL_DEADLINE)));
    }
  }

  private record Clients(BigtableDataClient data, BigtableTableAdminClient admin) implements AutoCloseable {
    @Override
    public void close() {
      try {
        data.close();
      } finally {
        admin.close();
      }
    }
  }

  /** One attempt per call: a write retried against a restarted node would blur what was acknowledged. */
  private static RetrySettings once(Duration deadline) {
    return RetrySettings.newBuilder()
        .setMaxAttempts(1)
        .setInitialRpcTimeoutDuration(deadline)
        .setMaxRpcTimeoutDuration(deadline)
        .setRpcTimeoutMultiplier(1.0)
        .setTotalTimeoutDuration(deadline)
        .build();
  }

  private static BigtableDataSettings dataSettings(int port) throws IOException {
    BigtableDataSettings.Builder builder = BigtableDataSettings.newBuilderForEmulator(LOOPBACK, port)
        .setProjectId(PROJECT)
        .setInstanceId(INSTANCE)
        .setMetricsProvider(NoopMetricsProvider.INSTANCE)
        .disableInternalMetrics();
    EnhancedBigtableStubSettings.Builder stub = builder.stubSettings();
    stub.mutateRowSettings().setRetrySettings(once(CALL_DEADLINE));
    stub.readRowsSettings().setRetrySettings(once(READ_DEADLINE)).setIdleTimeoutDuration(CALL_DEADLINE);
    return builder.build();
  }

  private static BigtableTableAdminSettings adminSettings(int port, Duration deadline) throws IOException {
    BigtableTableAdminSettings.Builder builder = BigtableTableAdminSettings.newBuilderForEmulator(LOOPBACK, port)
        .setProjectId(PROJECT)
        .setInstanceId(INSTANCE);
    builder.stubSettings().applyToAllUnaryMethods(s -> {
      s.setRetrySettings(once(deadline));
      return null;
    });
    return builder.build();
  }
}
