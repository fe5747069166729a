package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.RowMutationEntry;
import com.google.cloud.bigtable.data.v2.models.TableId;
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

/**
 * The load a scenario runs while it changes the cluster: a table {@code t} of {@code ranges}
 * tablets (split at {@code k1}, {@code k2}, ...), rows written before, writers through some
 * nodes, and a scanner and a reader by key through another, all with the official client. It
 * records every acknowledged write and checks each scan (every row once, in order, none of
 * the rows written before missing) and each read by key (every acknowledged row found);
 * {@link #verify} reads the table back afterwards.
 */
final class Workload {
  static final TableId T = TableId.of("t");

  /** A write: its tablet range, when it started and ended (System.nanoTime), its key. */
  record Write(int range, long start, long end, String key) {}

  private final List<String> prefixes;
  private final Set<String> before = new TreeSet<>();
  private final AtomicBoolean stop = new AtomicBoolean();
  private final ConcurrentLinkedQueue<Write> acked = new ConcurrentLinkedQueue<>();
  /** Writes that failed or timed out: each may or may not have been applied. */
  private final ConcurrentLinkedQueue<String> unknown = new ConcurrentLinkedQueue<>();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<Integer> scans = Collections.synchronizedList(new ArrayList<>());
  private final java.util.concurrent.atomic.AtomicInteger keyReads = new java.util.concurrent.atomic.AtomicInteger();
  private final java.util.concurrent.atomic.AtomicInteger failedReads = new java.util.concurrent.atomic.AtomicInteger();
  /** Operations on the register rows ({@link #withRegisters}), for the history check. */
  private final RegisterHistory registers = new RegisterHistory();
  /** Marks the register rows' keys, which {@link #verify} leaves to the history check. */
  private static final String REGISTER = "-reg";

  private Workload(List<String> prefixes) {
    this.prefixes = prefixes;
  }

  /**
   * Creates the table through {@code via} with {@code ranges} tablets (split at k1, k2, ...),
   * waits until every node is ready, and writes the rows before.
   */
  static Workload create(ClusterFixture cluster, NodeJvm via, int ranges, int rowsBefore) throws Exception {
    List<String> splits = new ArrayList<>();
    List<String> prefixes = new ArrayList<>();
    for (int i = 0; i < ranges; i++) {
      prefixes.add("k" + i);
      if (i > 0) {
        splits.add("k" + i);
      }
    }
    return create(cluster, via, splits, prefixes, rowsBefore);
  }

  /**
   * Creates the table through {@code via} split at {@code splits}, waits until every node is
   * ready, and writes {@code rowsBefore} rows whose keys start with the {@code prefixes} in turn.
   */
  static Workload create(ClusterFixture cluster, NodeJvm via, List<String> splits, List<String> prefixes,
      int rowsBefore) throws Exception {
    Workload w = new Workload(prefixes);
    ClusterFixture.createTable(via, "t", splits);
    for (NodeJvm n : cluster.nodes) {
      n.awaitReady(Duration.ofSeconds(30));
    }
    try (BigtableDataClient c = ClusterFixture.data(via)) {
      BulkMutation bulk = BulkMutation.create(T);
      for (int i = 0; i < rowsBefore; i++) {
        String key = String.format("%s-pre-%05d", prefixes.get(i % prefixes.size()), i);
        bulk.add(RowMutationEntry.create(key).setCell("f", "q", "p" + i));
        w.before.add(key);
      }
      c.bulkMutateRows(bulk);
    }
    return w;
  }

  /** Starts a writer through each of {@code writers} and a scanner through {@code scanner}. */
  Workload start(List<NodeJvm> writers, NodeJvm scanner) {
    return start(writers, scanner, prefixes.size(), 0);
  }

  /**
   * Starts a writer through each of {@code writers}, writing rows under the first
   * {@code writtenPrefixes} prefixes in turn with values of {@code valueBytes} (0: short
   * ones), and a scanner through {@code scanner}.
   */
  Workload start(List<NodeJvm> writers, NodeJvm scanner, int writtenPrefixes, int valueBytes) {
    startWriters(writers, writtenPrefixes, valueBytes, false);
    threads.add(started("key-reader", () -> readKeys(scanner, false)));
    threads.add(started("scanner", () -> {
      try (BigtableDataClient c = ClusterFixture.data(scanner)) {
        while (!stop.get()) {
          List<String> keys = new ArrayList<>();
          for (Row r : c.readRows(Query.create(T))) {
            keys.add(r.getKey().toStringUtf8());
          }
          if (!new ArrayList<>(new TreeSet<>(keys)).equals(keys)) {
            throw new AssertionError("a scan returned rows out of order or twice");
          }
          if (!keys.containsAll(before)) {
            throw new AssertionError("a scan missed rows written before the load began");
          }
          scans.add(keys.size());
        }
      }
    }));
    return this;
  }

  /**
   * Starts a writer through each of {@code writers} that goes on through failures: a write
   * that fails (its node died, its tablet is not served yet) is recorded as unknown, since it
   * may have been applied, and the writer moves on to the next row. No reader or scanner: a
   * read of a tablet that is not served fails, which is what the scenario expects for a time.
   */
  Workload startThroughFailures(List<NodeJvm> writers) {
    return startThroughFailures(writers, prefixes.size(), 0);
  }

  /**
   * As {@link #startThroughFailures(List)}, writing rows under the first {@code writtenPrefixes}
   * prefixes in turn with values of {@code valueBytes} (0: short ones).
   */
  Workload startThroughFailures(List<NodeJvm> writers, int writtenPrefixes, int valueBytes) {
    startWriters(writers, writtenPrefixes, valueBytes, true);
    return this;
  }

  /**
   * A writer through each of {@code writers}, rows under the first {@code writtenPrefixes}
   * prefixes in turn; with {@code throughFailures} a failed write is recorded as unknown and
   * the writer goes on, else it fails the load.
   */
  private void startWriters(List<NodeJvm> writers, int writtenPrefixes, int valueBytes, boolean throughFailures) {
    String pad = "x".repeat(valueBytes);
    for (NodeJvm via : writers) {
      threads.add(started("writer-" + via.name, () -> {
        try (BigtableDataClient c = ClusterFixture.data(via)) {
          for (int seq = 0; !stop.get(); seq++) {
            int range = seq % writtenPrefixes;
            String key = String.format("%s-%s-%06d", prefixes.get(range), via.name, seq);
            long start = System.nanoTime();
            try {
              c.mutateRow(RowMutation.create(T, key).setCell("f", "q", "w" + seq + pad));
              acked.add(new Write(range, start, System.nanoTime(), key));
            } catch (com.google.api.gax.rpc.ApiException e) {
              if (!throughFailures) {
                throw e;
              }
              unknown.add(key);
            }
          }
        }
      }));
    }
  }

  /**
   * Waits until a row written before in each of the tablet ranges {@code ranges} (indexes into
   * the prefixes) reads back through {@code via}, each try bounded by a one-second deadline;
   * prints how long each took. Returns the longest wait, in ms.
   */
  long awaitReadable(NodeJvm via, List<Integer> ranges, Duration within) throws Exception {
    long start = System.nanoTime();
    long deadline = start + within.toNanos();
    long longest = 0;
    try (BigtableDataClient c = ClusterFixture.data(via, Duration.ofSeconds(1))) {
      for (int range : ranges) {
        String key = before.stream().filter(k -> k.startsWith(prefixes.get(range) + "-")).findFirst().orElseThrow();
        int failures = 0;
        while (true) {
          try {
            List<Row> rows = new ArrayList<>();
            c.readRows(Query.create(T).rowKey(key)).forEach(rows::add);
            if (rows.size() == 1) {
              long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
              longest = Math.max(longest, ms);
              System.out.printf("row %s read back %d ms after the wait began, after %d failed tries%n", key, ms,
                  failures);
              break;
            }
          } catch (com.google.api.gax.rpc.ApiException notYet) {
            failures++;
          }
          if (System.nanoTime() > deadline) {
            throw new AssertionError("row " + key + " did not read back within " + within);
          }
          Thread.sleep(100);
        }
      }
    }
    return longest;
  }

  /**
   * Reads rows by key through {@code via} until stopped: 25 keys at a time (rows written
   * before and acknowledged writes, spread over the tablets, so most are served by other
   * nodes than {@code via}), then one key alone, checking that every row acknowledged before
   * the read began comes back. With {@code throughFailures}, a read that fails (its node
   * stopped, its tablet not served yet) is counted and the reader goes on; a read that
   * answers is checked all the same, so a stale answer still fails the scenario.
   */
  private void readKeys(NodeJvm via, boolean throughFailures) throws Exception {
    List<String> earlier = new ArrayList<>(before);
    java.util.SplittableRandom random = new java.util.SplittableRandom(17);
    try (BigtableDataClient c = throughFailures ? ClusterFixture.data(via, Duration.ofSeconds(2))
        : ClusterFixture.data(via)) {
      while (!stop.get()) {
        List<String> known = new ArrayList<>(earlier);
        acked.forEach(w -> known.add(w.key()));
        Set<String> wanted = new TreeSet<>();
        while (wanted.size() < Math.min(25, known.size())) {
          wanted.add(known.get(random.nextInt(known.size())));
        }
        Query q = Query.create(T);
        wanted.forEach(q::rowKey);
        Set<String> got = new TreeSet<>();
        String one = known.get(random.nextInt(known.size()));
        Row alone;
        try {
          for (Row r : c.readRows(q)) {
            got.add(r.getKey().toStringUtf8());
          }
          alone = c.readRows(Query.create(T).rowKey(one)).stream().findFirst().orElse(null);
        } catch (com.google.api.gax.rpc.ApiException e) {
          if (!throughFailures) {
            throw e;
          }
          failedReads.incrementAndGet();
          Thread.sleep(50);
          continue;
        }
        if (!got.equals(wanted)) {
          Set<String> missing = new TreeSet<>(wanted);
          missing.removeAll(got);
          throw new AssertionError("a read of " + wanted.size() + " keys through " + via.name
              + " missed acknowledged rows " + missing);
        }
        if (alone == null) {
          throw new AssertionError("a read of the acknowledged row " + one + " through " + via.name + " found nothing");
        }
        keyReads.incrementAndGet();
      }
    }
  }

  /**
   * Adds a reader by key through {@code via} that goes on through failures and checks every
   * read that answers ({@link #readKeys}).
   */
  Workload withReaderThroughFailures(NodeJvm via) {
    threads.add(started("reader-" + via.name, () -> readKeys(via, true)));
    return this;
  }

  private Thread started(String name, ThrowingRunnable body) {
    Thread t = new Thread(() -> {
      try {
        body.run();
      } catch (Throwable e) {
        failure.compareAndSet(null, new AssertionError(name + " failed", e));
      }
    }, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  @FunctionalInterface
  interface ThrowingRunnable {
    void run() throws Exception;
  }

  /**
   * Adds a writer through the Tabula client, seeded with {@code seed}: it sends each row to
   * the node its location cache names, and follows a stale route when a tablet has moved.
   */
  Workload withTabulaWriter(NodeJvm seed) {
    threads.add(started("tabula-writer", () -> {
      try (io.tabula.client.TabulaClient c = io.tabula.client.TabulaClient.builder().endpoint(seed.endpoint())
          .instance(ClusterFixture.PROJECT, ClusterFixture.INSTANCE).build()) {
        for (int seq = 0; !stop.get(); seq++) {
          int range = seq % prefixes.size();
          String key = String.format("%s-tabula-%06d", prefixes.get(range), seq);
          long start = System.nanoTime();
          c.apply("t", io.tabula.client.RowMutation.create(key).setCell("f", "q", 1000L, "t" + seq))
              .toCompletableFuture().get(60, TimeUnit.SECONDS);
          acked.add(new Write(range, start, System.nanoTime(), key));
        }
      }
    }));
    return this;
  }

  /**
   * Adds, through each of {@code via}, a writer and a reader of the register rows (one row per
   * tablet range, {@code <prefix>-reg}) that go on through failures: the writer writes values
   * no other write uses, the reader reads a row's latest cell, and every operation is recorded
   * in a {@link RegisterHistory} with its invocation and answer times and its outcome.
   * {@link #checkRegisters} reads each row once more at the end and checks the history.
   */
  Workload withRegisters(List<NodeJvm> via) {
    for (NodeJvm n : via) {
      threads.add(started("register-writer-" + n.name, () -> {
        java.util.SplittableRandom random = new java.util.SplittableRandom(n.name.hashCode());
        try (BigtableDataClient c = ClusterFixture.data(n)) {
          for (int seq = 0; !stop.get(); seq++) {
            String row = prefixes.get(random.nextInt(prefixes.size())) + REGISTER;
            String value = n.name + "-" + seq;
            long invoked = System.nanoTime();
            try {
              c.mutateRow(RowMutation.create(T, row).setCell("f", "q", value));
              registers.write(row, value, invoked, System.nanoTime());
            } catch (com.google.api.gax.rpc.ApiException e) {
              registers.write(row, value, invoked, RegisterHistory.NEVER);
            }
          }
        }
      }));
      threads.add(started("register-reader-" + n.name, () -> {
        java.util.SplittableRandom random = new java.util.SplittableRandom(~n.name.hashCode());
        try (BigtableDataClient c = ClusterFixture.data(n, Duration.ofSeconds(2))) {
          while (!stop.get()) {
            String row = prefixes.get(random.nextInt(prefixes.size())) + REGISTER;
            readRegister(c, row);
          }
        }
      }));
    }
    return this;
  }

  /** Reads register {@code row}'s latest cell and records it; a read that fails is not recorded. */
  private void readRegister(BigtableDataClient c, String row) {
    long invoked = System.nanoTime();
    try {
      Row r = c.readRow(T, row, com.google.cloud.bigtable.data.v2.models.Filters.FILTERS.limit().cellsPerColumn(1));
      String value = r == null || r.getCells("f", "q").isEmpty() ? null
          : r.getCells("f", "q").get(0).getValue().toStringUtf8();
      registers.read(row, value, invoked, System.nanoTime());
    } catch (com.google.api.gax.rpc.ApiException e) {
      failedReads.incrementAndGet();
    }
  }

  /**
   * After {@link #stop}: reads every register row once more through {@code via} (so a lost last
   * write shows), checks the history ({@link RegisterHistory#check}) and prints its summary.
   */
  void checkRegisters(NodeJvm via) throws Exception {
    try (BigtableDataClient c = ClusterFixture.data(via)) {
      for (String p : prefixes) {
        int before = registers.size();
        readRegister(c, p + REGISTER);
        if (registers.size() == before) {
          throw new AssertionError("the final read of register " + p + REGISTER + " through " + via.name + " failed");
        }
      }
    }
    System.out.println("register history: " + registers.check());
  }

  /** The first failure of a writer or the scanner, or null. */
  Throwable failure() {
    return failure.get();
  }

  /** Stops the writers and the scanner; throws what failed in them. */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread t : threads) {
      long start = System.nanoTime();
      t.join(60_000);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      if (ms > 5_000 || t.isAlive()) {
        System.out.printf("%s took %d ms to stop%s%n", t.getName(), ms, t.isAlive() ? " (still running)" : "");
      }
    }
    if (failure.get() != null) {
      throw new AssertionError("the load failed", failure.get());
    }
  }

  /** Reads the table back through {@code via}: every acknowledged write and every row written before, once, in order. */
  void verify(NodeJvm via) throws Exception {
    Set<String> all = new TreeSet<>(before);
    acked.forEach(w -> all.add(w.key()));
    List<String> read = new ArrayList<>();
    try (BigtableDataClient c = ClusterFixture.data(via)) {
      for (Row r : c.readRows(Query.create(T))) {
        String key = r.getKey().toStringUtf8();
        if (!key.endsWith(REGISTER)) {
          read.add(key);
        }
      }
    }
    if (!unknown.isEmpty()) {
      // A write whose outcome is unknown may be there or not; only those may be, beyond the acknowledged.
      Set<String> mayBe = new TreeSet<>(unknown);
      List<String> known = new ArrayList<>();
      for (String k : read) {
        if (!mayBe.contains(k) || all.contains(k)) {
          known.add(k);
        }
      }
      assertEquals(new TreeSet<>(read).size(), read.size(), "no row reads back twice");
      read = known;
    }
    assertEquals(new ArrayList<>(all), read, "every acknowledged write reads back, once, in order; nothing else");
    System.out.printf("%d writes acknowledged, %d with an unknown outcome, %d scans and %d reads by key completed "
        + "during the load (%d failed), %d known rows read back%n", acked.size(), unknown.size(), scans.size(),
        keyReads.get(), failedReads.get(), read.size());
  }

  /** The longest write to tablet range {@code range} that started within [from, to] (System.nanoTime), in ms. */
  long longestWriteMs(int range, long from, long to) {
    long worst = 0;
    for (Write w : acked) {
      if ((range < 0 || w.range() == range) && w.start() >= from && w.start() <= to) {
        worst = Math.max(worst, w.end() - w.start());
      }
    }
    return TimeUnit.NANOSECONDS.toMillis(worst);
  }

  int scans() {
    return scans.size();
  }

  /** Polls {@code via}'s tablet list until every tablet is serving at one of {@code nodes} (and, if given, check holds). */
  static Map<String, String[]> awaitPlacement(NodeJvm via, Set<String> nodes, Duration within,
      java.util.function.Predicate<Map<String, String[]>> check) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    Map<String, String[]> t = Map.of();
    while (System.nanoTime() < deadline) {
      t = ClusterFixture.tablets(via, "t");
      boolean settled = !t.isEmpty() && t.values().stream().allMatch(o -> nodes.contains(o[0])
          && o[1].equals("serving"));
      if (settled && check.test(t)) {
        return t;
      }
      Thread.sleep(200);
    }
    StringBuilder sb = new StringBuilder();
    t.forEach((id, o) -> sb.append(id).append('=').append(o[0]).append('/').append(o[1]).append(' '));
    throw new AssertionError("the tablets did not settle on " + nodes + " within " + within + ": " + sb);
  }
}
