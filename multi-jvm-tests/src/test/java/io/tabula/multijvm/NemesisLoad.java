package io.tabula.multijvm;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import com.google.api.gax.rpc.ApiException;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Filters;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.RowMutationEntry;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import io.tabula.client.Filter;
import io.tabula.client.TabulaClient;
import io.tabula.client.TabulaException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The nemesis scenario's load, on table t: one register row per range ({@code k0-reg} ..
 * {@code k7-reg}, values no other write uses) and plain rows. Through every life of every
 * node, from when it is ready until its process ends (a stopped life's clients keep their
 * calls waiting on it, and go on after it resumes): a writer of register rows and plain rows
 * with the official client, and a reader of every register row that reads each one every
 * 100 ms (each read cancelled after 2 s), so the gaps between successful reads show what a fault costs. A
 * writer and reader through the Tabula client too. Every register operation is recorded in a
 * {@link RegisterHistory} with its invocation and answer times, its outcome and its client;
 * every plain write is recorded as acknowledged or of unknown outcome.
 *
 * <p>On request: a burst of 1 KiB rows into one range (its tablet splits by size); the z range
 * (rows {@code z-00000} .. written before the load) read hot in batches of 20 rows, so its
 * tablet splits by load, and let cool again, so the pieces merge; each hot read must find
 * every row it asks for. At the end: a read of every register row through every node, and a
 * full read-back that must hold every acknowledged row, once, in order, and nothing never
 * written.
 *
 * <p>Thread-safe. Owns its threads and clients; {@link #stop} ends them.
 */
final class NemesisLoad {
  static final TableId T = TableId.of("t");
  static final int RANGES = 8;
  static final int Z_ROWS = 200;
  static final String REGISTER = "-reg";
  private static final int BURST_ROWS = 700;
  private static final Filters.Filter LATEST = Filters.FILTERS.limit().cellsPerColumn(1);

  /** An acknowledged write: its key, invocation and answer times, the client it went through. */
  record Write(String key, long invoked, long answered, String via) {}

  private final NemesisCluster cluster;
  private final NemesisReport report;
  private final RegisterHistory registers = new RegisterHistory();
  private final Map<String, Write> acked = new ConcurrentHashMap<>();
  private final Set<String> unknown = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final List<Thread> threads = new CopyOnWriteArrayList<>();
  private final List<BigtableDataClient> clients = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService reads = Executors.newScheduledThreadPool(2, r -> {
    Thread t = new Thread(r, "register-reads");
    t.setDaemon(true);
    return t;
  });
  private final AtomicLong failedReads = new AtomicLong();
  private final AtomicLong hotReads = new AtomicLong();
  private final AtomicInteger hotViolations = new AtomicInteger();
  /** The first z row the hot reader reads, or -1 while the z range is cool. */
  private volatile int hotFrom = -1;
  private volatile Thread hammer;

  NemesisLoad(NemesisCluster cluster, NemesisReport report) {
    this.cluster = cluster;
    this.report = report;
  }

  static String register(int range) {
    return "k" + range + REGISTER;
  }

  static String zRow(int i) {
    return String.format("z-%05d", i);
  }

  RegisterHistory registers() {
    return registers;
  }

  /** Creates table t through {@code via}, split at k1..k7 and z, and writes rows in every range before the load. */
  void create(NemesisCluster.Life via) throws IOException {
    List<String> splits = new ArrayList<>();
    for (int i = 1; i < RANGES; i++) {
      splits.add("k" + i);
    }
    splits.add("z");
    ClusterFixture.createTable(via.jvm(), "t", splits);
    try (BigtableDataClient c = ClusterFixture.data(via.jvm())) {
      BulkMutation bulk = BulkMutation.create(T);
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < RANGES * 40; i++) {
        keys.add(String.format("k%d-pre-%04d", i % RANGES, i));
      }
      for (int i = 0; i < Z_ROWS; i++) {
        keys.add(zRow(i));
      }
      keys.forEach(k -> bulk.add(RowMutationEntry.create(k).setCell("f", "q", "p-" + k)));
      long invoked = System.nanoTime();
      c.bulkMutateRows(bulk);
      long answered = System.nanoTime();
      keys.forEach(k -> acked.put(k, new Write(k, invoked, answered, "before the load")));
    }
  }

  /** Starts the writer and the register reads through {@code life} (called once it is ready). */
  void startThrough(NemesisCluster.Life life) {
    if (!running.get()) {
      return;
    }
    threads.add(started("writer-" + life.label(), () -> writeThrough(life)));
    try {
      BigtableDataClient c = ClusterFixture.data(life.jvm(), Duration.ofSeconds(2));
      clients.add(c);
      AtomicInteger chains = new AtomicInteger(RANGES);
      for (int r = 0; r < RANGES; r++) {
        readChain(life, c, register(r), chains);
      }
    } catch (IOException e) {
      report.event("could not make a client for " + life.label() + ": " + e);
    }
  }

  private void writeThrough(NemesisCluster.Life life) throws IOException, InterruptedException {
    SplittableRandom random = new SplittableRandom(life.label().hashCode());
    try (BigtableDataClient c = ClusterFixture.data(life.jvm())) {
      for (int seq = 0; running.get() && life.jvm().alive(); seq++) {
        String row = register(random.nextInt(RANGES));
        String value = life.label() + "-" + seq;
        long invoked = System.nanoTime();
        try {
          c.mutateRow(RowMutation.create(T, row).setCell("f", "q", value));
          registers.write(row, value, invoked, System.nanoTime(), life.label());
        } catch (ApiException e) {
          registers.write(row, value, invoked, RegisterHistory.NEVER, life.label());
        }
        String key = String.format("k%d-%s.%d-%06d", seq % RANGES, life.name(), life.number(), seq);
        invoked = System.nanoTime();
        try {
          c.mutateRow(RowMutation.create(T, key).setCell("f", "q", "w" + seq));
          acked.put(key, new Write(key, invoked, System.nanoTime(), life.label()));
        } catch (ApiException e) {
          unknown.add(key);
        }
        Thread.sleep(20);
      }
    }
  }

  /**
   * Reads register {@code row} through {@code life} now, and again 100 ms after each answer,
   * while the life runs; the last of its {@code chains} to end closes the client.
   */
  private void readChain(NemesisCluster.Life life, BigtableDataClient c, String row, AtomicInteger chains) {
    if (!running.get() || !life.jvm().alive()) {
      if (chains.decrementAndGet() == 0 && clients.remove(c)) {
        c.close();
      }
      return;
    }
    long invoked = System.nanoTime();
    ApiFuture<Row> f = c.readRowAsync(T, row, LATEST);
    try {
      // The client's deadline does not bound a read that waits on a stopped node: cancel it here.
      reads.schedule(() -> f.cancel(true), 2, TimeUnit.SECONDS);
    } catch (RejectedExecutionException stopped) {
      f.cancel(true);
    }
    ApiFutures.addCallback(f, new ApiFutureCallback<>() {
      @Override
      public void onSuccess(Row r) {
        registers.read(row, value(r), invoked, System.nanoTime(), life.label());
        next();
      }

      @Override
      public void onFailure(Throwable t) {
        failedReads.incrementAndGet();
        next();
      }

      private void next() {
        try {
          reads.schedule(() -> readChain(life, c, row, chains), 100, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
          // the load has stopped
        }
      }
    }, MoreExecutors.directExecutor());
  }

  private static String value(Row r) {
    return r == null || r.getCells("f", "q").isEmpty() ? null : r.getCells("f", "q").get(0).getValue().toStringUtf8();
  }

  /**
   * Starts the writer and reader through the Tabula client: it starts from a healthy node and
   * starts again from another once that node is gone or ten calls in a row have failed.
   */
  void startTabula() {
    threads.add(started("tabula", () -> {
      SplittableRandom random = new SplittableRandom(7);
      TabulaClient client = null;
      NemesisCluster.Life seed = null;
      int failures = 0;
      try {
        for (int seq = 0; running.get(); seq++) {
          if (client == null || failures >= 10 || !cluster.life(seed.name()).equals(Optional.of(seed))
              || !seed.jvm().alive() || cluster.isStopped(seed)) {
            closeQuietly(client);
            client = null;
            List<NemesisCluster.Life> healthy = cluster.healthy();
            if (healthy.isEmpty()) {
              Thread.sleep(500);
              continue;
            }
            seed = healthy.get(random.nextInt(healthy.size()));
            client = TabulaClient.builder().endpoint(seed.jvm().endpoint())
                .instance(ClusterFixture.PROJECT, ClusterFixture.INSTANCE).deadline(Duration.ofSeconds(5)).build();
            failures = 0;
          }
          failures = tabulaOps(client, seq, random) ? 0 : failures + 1;
          Thread.sleep(20);
        }
      } finally {
        closeQuietly(client);
      }
    }));
  }

  /** A register write, a plain write and a register read through {@code c}; whether all answered. */
  private boolean tabulaOps(TabulaClient c, int seq, SplittableRandom random) throws InterruptedException {
    boolean ok = true;
    String row = register(random.nextInt(RANGES));
    String value = "tabula-" + seq;
    long invoked = System.nanoTime();
    try {
      c.apply("t", io.tabula.client.RowMutation.create(row).setCell("f", "q", value)).toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
      registers.write(row, value, invoked, System.nanoTime(), "tabula client");
    } catch (ExecutionException | TimeoutException e) {
      registers.write(row, value, invoked, RegisterHistory.NEVER, "tabula client");
      ok = false;
    }
    String key = String.format("k%d-tabula-%06d", seq % RANGES, seq);
    invoked = System.nanoTime();
    try {
      c.apply("t", io.tabula.client.RowMutation.create(key).setCell("f", "q", 1000L, "t" + seq))
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      acked.put(key, new Write(key, invoked, System.nanoTime(), "tabula client"));
    } catch (ExecutionException | TimeoutException e) {
      unknown.add(key);
      ok = false;
    }
    String read = register(random.nextInt(RANGES));
    invoked = System.nanoTime();
    try {
      Optional<io.tabula.client.Row> r = c.readRow("t", ByteString.copyFromUtf8(read), Filter.latest(1))
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      registers.read(read, r.flatMap(x -> x.latest("f", "q")).map(io.tabula.client.Cell::valueUtf8).orElse(null),
          invoked, System.nanoTime(), "tabula client");
    } catch (ExecutionException | TimeoutException e) {
      failedReads.incrementAndGet();
      ok = false;
    }
    return ok;
  }

  private static void closeQuietly(TabulaClient c) {
    if (c != null) {
      try {
        c.close();
      } catch (TabulaException e) {
        System.out.println("closing a Tabula client: " + e);
      }
    }
  }

  /**
   * Writes {@value #BURST_ROWS} rows of 1 KiB into range {@code range} through {@code via}, in
   * batches of 50 (a batch that fails is of unknown outcome); returns how many were acknowledged.
   */
  int burst(int range, int step, NemesisCluster.Life via) throws IOException {
    int ok = 0;
    String pad = "x".repeat(1000);
    try (BigtableDataClient c = ClusterFixture.data(via.jvm())) {
      for (int from = 0; from < BURST_ROWS; from += 50) {
        BulkMutation bulk = BulkMutation.create(T);
        List<String> keys = new ArrayList<>();
        for (int i = from; i < from + 50; i++) {
          String key = String.format("k%d-burst%03d-%04d", range, step, i);
          keys.add(key);
          bulk.add(RowMutationEntry.create(key).setCell("f", "q", pad + i));
        }
        long invoked = System.nanoTime();
        try {
          c.bulkMutateRows(bulk);
          long answered = System.nanoTime();
          keys.forEach(k -> acked.put(k, new Write(k, invoked, answered, via.label() + " (burst)")));
          ok += keys.size();
        } catch (ApiException e) {
          unknown.addAll(keys);
        }
      }
    }
    return ok;
  }

  /** Reads rows {@code z-from} .. {@code z-(from+39)} hot (batches of 20), until {@link #cool}. */
  synchronized void heat(int from) {
    hotFrom = from;
    if (hammer == null || !hammer.isAlive()) {
      hammer = started("hot-reader", this::readHot);
      threads.add(hammer);
    }
  }

  /** Stops the hot reads of the z range. */
  void cool() {
    hotFrom = -1;
  }

  private void readHot() throws IOException, InterruptedException {
    Map<NemesisCluster.Life, BigtableDataClient> byLife = new ConcurrentHashMap<>();
    int turn = 0;
    while (running.get() && hotFrom >= 0) {
      List<NemesisCluster.Life> healthy = cluster.healthy();
      if (healthy.isEmpty()) {
        Thread.sleep(200);
        continue;
      }
      byLife.keySet().removeIf(l -> {
        boolean gone = !l.jvm().alive();
        if (gone && clients.remove(byLife.get(l))) {
          byLife.get(l).close();
        }
        return gone;
      });
      NemesisCluster.Life via = healthy.get(turn++ % healthy.size());
      BigtableDataClient c = byLife.get(via);
      if (c == null) {
        c = ClusterFixture.data(via.jvm(), Duration.ofSeconds(2));
        clients.add(c);
        byLife.put(via, c);
      }
      int from = hotFrom + (turn % 2) * 20;
      Query q = Query.create(T);
      Set<String> wanted = new java.util.TreeSet<>();
      for (int i = from; i < from + 20 && i < Z_ROWS; i++) {
        wanted.add(zRow(i));
        q.rowKey(zRow(i));
      }
      long invoked = System.nanoTime();
      try {
        Set<String> got = new java.util.TreeSet<>();
        for (Row r : c.readRows(q)) {
          got.add(r.getKey().toStringUtf8());
        }
        hotReads.incrementAndGet();
        if (!got.equals(wanted) && hotViolations.incrementAndGet() <= 3) {
          Set<String> missing = new java.util.TreeSet<>(wanted);
          missing.removeAll(got);
          report.violation("a read of " + wanted.size() + " rows written before the load began, through "
              + via.label() + ", missed " + missing + " (invoked " + report.at(invoked) + ", answered "
              + report.at(System.nanoTime()) + ")", invoked, System.nanoTime(), "");
        }
      } catch (ApiException e) {
        failedReads.incrementAndGet();
      }
      Thread.sleep(10);
    }
  }

  private Thread started(String name, NemesisLoad.Body body) {
    Thread t = new Thread(() -> {
      try {
        body.run();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (IOException | RuntimeException e) {
        report.event(name + " stopped: " + e);
        e.printStackTrace(System.out);
      }
    }, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  @FunctionalInterface
  private interface Body {
    void run() throws IOException, InterruptedException;
  }

  /** Stops every writer and reader, waiting up to 60 s for each thread, and closes the clients; once. */
  void stop() throws InterruptedException {
    if (!running.getAndSet(false)) {
      return;
    }
    hotFrom = -1;
    for (Thread t : threads) {
      t.join(60_000);
      if (t.isAlive()) {
        report.event(t.getName() + " still runs 60 s after the load stopped");
      }
    }
    reads.shutdownNow();
    for (BigtableDataClient c : clients) {
      if (clients.remove(c)) {
        c.close();
      }
    }
    long ackedRegisters = registers.ops().stream().filter(o -> o.write() && o.answered() != RegisterHistory.NEVER)
        .count();
    report.event(String.format("load stopped: %d plain rows acknowledged, %d of unknown outcome; %d register "
        + "operations (%d writes acknowledged); %d reads failed; %d hot reads", acked.size(), unknown.size(),
        registers.size(), ackedRegisters, failedReads.get(), hotReads.get()));
  }

  /**
   * After {@link #stop}: reads every register row through each of {@code lives}, recorded, so a
   * lost last write shows in the history; a read that fails even after its retries is reported.
   */
  void finalReads(List<NemesisCluster.Life> lives) throws IOException {
    for (NemesisCluster.Life l : lives) {
      try (BigtableDataClient c = ClusterFixture.data(l.jvm())) {
        for (int r = 0; r < RANGES; r++) {
          long invoked = System.nanoTime();
          try {
            Row row = c.readRow(T, register(r), LATEST);
            registers.read(register(r), value(row), invoked, System.nanoTime(), l.label() + " (final read)");
          } catch (ApiException e) {
            report.violation("the final read of " + register(r) + " through " + l.label() + ", with the cluster "
                + "healthy, failed: " + e, invoked, System.nanoTime(), "");
          }
        }
      }
    }
  }

  /**
   * Reads table t back through {@code via}: every acknowledged row once, in order, and nothing
   * never written (a row of unknown outcome may be there or not). Reports what is wrong; returns
   * a one-line summary.
   */
  String verify(NemesisCluster.Life via) throws IOException {
    List<String> read = new ArrayList<>();
    long invoked = System.nanoTime();
    try (BigtableDataClient c = ClusterFixture.data(via.jvm())) {
      for (int attempt = 1; ; attempt++) {
        read.clear();
        try {
          for (Row r : c.readRows(Query.create(T))) {
            String key = r.getKey().toStringUtf8();
            if (!key.endsWith(REGISTER)) {
              read.add(key);
            }
          }
          break;
        } catch (ApiException e) {
          if (attempt == 3) {
            report.violation("the read-back through " + via.label() + ", with the cluster healthy, failed three "
                + "times: " + e, invoked, System.nanoTime(), "");
            return "read-back through " + via.label() + " failed";
          }
        }
      }
    }
    long answered = System.nanoTime();
    Set<String> seen = new java.util.TreeSet<>(read);
    if (!new ArrayList<>(seen).equals(read)) {
      report.violation("the read-back through " + via.label() + " returned rows out of order or twice", invoked,
          answered, "");
    }
    List<Write> missing = acked.values().stream().filter(w -> !seen.contains(w.key()))
        .sorted(java.util.Comparator.comparingLong(Write::answered)).toList();
    if (!missing.isEmpty()) {
      StringBuilder around = new StringBuilder();
      missing.stream().limit(40).forEach(w -> around.append("  write ").append(w.key()).append(" invoked ")
          .append(report.at(w.invoked())).append(" answered ").append(report.at(w.answered())).append(" via ")
          .append(w.via()).append('\n'));
      if (missing.size() > 40) {
        around.append("  ... and ").append(missing.size() - 40).append(" more\n");
      }
      report.violation(missing.size() + " acknowledged writes are missing from the read-back through "
          + via.label(), missing.get(0).invoked(), answered, around.toString());
    }
    List<String> strangers = read.stream().filter(k -> !acked.containsKey(k) && !unknown.contains(k)).toList();
    if (!strangers.isEmpty()) {
      report.violation("the read-back through " + via.label() + " has rows nobody wrote: "
          + strangers.subList(0, Math.min(20, strangers.size())), invoked, answered, "");
    }
    return String.format("read-back through %s: %d rows, %d acknowledged writes missing, %d of %d writes of "
        + "unknown outcome present", via.label(), read.size(), missing.size(),
        read.stream().filter(unknown::contains).count(), unknown.size());
  }
}
