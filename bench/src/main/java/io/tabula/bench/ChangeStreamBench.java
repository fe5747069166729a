package io.tabula.bench;

import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamMutation;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.tabula.bench.ChangeStreamReport.Delays;
import io.tabula.bench.ChangeStreamReport.Round;
import io.tabula.bench.ChangeStreamReport.Spread;
import io.tabula.bench.ChangeStreamReport.Stall;
import io.tabula.bench.ChangeStreamReport.Writes;
import io.tabula.cluster.conformance.ChangeFollower;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What a change stream costs a table's writes, and how soon its reader sees them, against one
 * Tabula node in this JVM on 127.0.0.1, driven by the official Java client. Never a test.
 *
 * <p>Two tables with one family: {@value #PLAIN} without a change stream, and {@value
 * #STREAMED} with a retention of one day, which one {@link ChangeFollower} (one stream held open per partition) follows from before
 * its first write to the end of the run. Writer threads write new rows of one cell, each thread
 * one {@code MutateRow} at a time. In every round each table gets a window of writes, the
 * order alternating between rounds, so both tables see the same machine noise; the reader
 * keeps following throughout. The node has finished its own warm-up before anything is
 * timed, and one untimed window per table warms the writers and the reader up first.
 *
 * <p>Measured:
 * <ol>
 *   <li>writes per second into each table, pooled over the rounds, and their ratio;
 *   <li>for each timed write into {@value #STREAMED}, the time from its {@code MutateRow}
 *       returning to the change reaching the reader, clamped at 0 (the reader may be handed the
 *       change before the writer gets its response), and from the call's start;
 *   <li>the bytes of {@value #STREAMED}'s change-log segments per byte of rows written (keys
 *       and values): at the end of writing, over the writes flushes had put into segments,
 *       and again after the node's clean stop, which flushes every memtable.
 * </ol>
 */
@Command(name = "change-streams", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Writes/s with and without a change stream, the delay from a write's acknowledgement to its "
        + "reader, and the bytes of change log kept per GB written, against one in-process node.")
public final class ChangeStreamBench implements Callable<Integer> {
  static final String PLAIN = "plain";
  static final String STREAMED = "streamed";
  static final String FAMILY = "f";
  static final ByteString QUALIFIER = ByteString.copyFromUtf8("v");
  /** Keys are {@code row%010d}, so the writes of one table may number up to this. */
  private static final int MAX_WRITES = 1_000_000_000;
  /** A reader's stream that fails this many times in a row, without a record in between, is given up. */
  private static final int FAILURES_IN_A_ROW = 10;

  @Option(names = "--writers", description = "Writer threads, each one MutateRow at a time; default: ${DEFAULT-VALUE}",
      defaultValue = "8")
  int writers;

  @Option(names = "--value-bytes", description = "Bytes of every value; default: ${DEFAULT-VALUE}",
      defaultValue = "1000")
  int valueBytes;

  @Option(names = "--rounds", description = "Rounds of one window per table; default: ${DEFAULT-VALUE}",
      defaultValue = "6")
  int rounds;

  @Option(names = "--seconds", description = "Seconds of one window; default: ${DEFAULT-VALUE}",
      defaultValue = "10")
  double seconds;

  @Option(names = "--warm-up-seconds", description = "Seconds of the untimed window per table first; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "10")
  double warmUpSeconds;

  @Option(names = "--heartbeat-ms", description = "The reader's heartbeat_duration; default: ${DEFAULT-VALUE}",
      defaultValue = "1000")
  long heartbeatMs;

  @Option(names = "--catch-up-seconds", description = "How long to wait after the last write for the reader "
      + "to have every change; default: ${DEFAULT-VALUE}", defaultValue = "60")
  double catchUpSeconds;

  @Option(names = "--seed", description = "Seed of the values; default: ${DEFAULT-VALUE}", defaultValue = "42")
  long seed;

  @Option(names = "--quick", description = "About a minute: 3 rounds of 5 s windows after 4 s of warm-up "
      + "(overrides --rounds, --seconds, --warm-up-seconds).")
  boolean quick;

  @Option(names = "--out", description = "Markdown result file; default: ${DEFAULT-VALUE}",
      defaultValue = "bench/results/change-streams.md")
  Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  /** Times are nanoseconds since just before this, so every stamp is positive. */
  private final long origin = System.nanoTime() - 1;

  public static void main(String[] args) {
    System.exit(new CommandLine(new ChangeStreamBench()).execute(args));
  }

  /** A table the writers write: its next row, and each write's times. Thread-safe. */
  private static final class Target {
    final String table;
    final AtomicInteger next = new AtomicInteger();
    final AtomicLong acknowledged = new AtomicLong();
    /** When each timed write's call started and returned; untimed writes are not stamped. */
    final Stamps called = new Stamps();
    final Stamps returned = new Stamps();
    /** When each write's change reached the reader. */
    final Stamps arrived = new Stamps();
    final AtomicLong seen = new AtomicLong();
    final AtomicLong seenTwice = new AtomicLong();
    final AtomicLong unknown = new AtomicLong();
    /** Writes and nanoseconds of the timed windows; written by the driving thread only. */
    long timedWrites;
    long timedNanos;

    Target(String table) {
      this.table = table;
    }
  }

  @Override
  public Integer call() throws Exception {
    if (quick) {
      rounds = 3;
      seconds = 5;
      warmUpSeconds = 4;
    }
    if (writers < 1 || valueBytes < 1 || rounds < 1 || seconds <= 0 || warmUpSeconds < 0 || heartbeatMs < 100) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--writers, --value-bytes, --rounds and "
          + "--seconds must be positive, --warm-up-seconds not negative, --heartbeat-ms at least 100");
    }
    String loadBefore = ResultsFile.loadAverage();
    Dataset data = new Dataset(MAX_WRITES, valueBytes, seed);
    Target plain = new Target(PLAIN);
    Target streamed = new Target(STREAMED);
    try (LogTally log = LogTally.attach()) {
      System.err.println("starting a Tabula node in this JVM ...");
      long starting = now();
      try (ApiPeer peer = ApiPeer.tabula()) {
        double readySeconds = (now() - starting) / 1e9;
        Path dataDir = peer.dataDir().orElseThrow();
        peer.createTable(PLAIN, FAMILY);
        peer.createTable(CreateTableRequest.of(STREAMED).addFamily(FAMILY)
            .addChangeStreamRetention(org.threeten.bp.Duration.ofDays(1)));
        ExecutorService pool = Executors.newFixedThreadPool(writers, r -> {
          Thread t = new Thread(r, "writer");
          t.setDaemon(true);
          return t;
        });
        List<Round> roundsRun = new ArrayList<>();
        List<Long> streamedStarts = new ArrayList<>();
        double catchUpMs;
        long[] gc;
        ChangeLogFiles atEnd;
        ChangeLogFiles plainLog;
        ChangeFollower reader = new ChangeFollower(peer.data(), STREAMED, Duration.ofMillis(heartbeatMs), null,
            FAILURES_IN_A_ROW, change -> arrived(streamed, change));
        try {
          reader.start(Instant.now());
          BigtableDataClient client = peer.data();
          System.err.printf(Locale.ROOT, "warming up: %.0f s per table%n", warmUpSeconds);
          window(pool, client, data, plain, warmUpSeconds, false);
          window(pool, client, data, streamed, warmUpSeconds, false);
          long[] gcBefore = collections();
          for (int r = 0; r < rounds; r++) {
            boolean plainFirst = r % 2 == 0;
            double plainRate = 0;
            double streamedRate = 0;
            long backlog = 0;
            for (Target t : plainFirst ? List.of(plain, streamed) : List.of(streamed, plain)) {
              if (t == streamed) {
                streamedStarts.add(now());
              }
              double rate = window(pool, client, data, t, seconds, true);
              if (t == plain) {
                plainRate = rate;
              } else {
                streamedRate = rate;
                backlog = streamed.acknowledged.get() - streamed.seen.get();
              }
            }
            roundsRun.add(new Round(plainFirst ? PLAIN : STREAMED, plainRate, streamedRate, backlog));
            System.err.printf(Locale.ROOT, "round %d/%d: %s %,.0f writes/s, %s %,.0f writes/s%n", r + 1, rounds,
                PLAIN, plainRate, STREAMED, streamedRate);
          }
          long[] gcAfter = collections();
          gc = new long[] {gcAfter[0] - gcBefore[0], gcAfter[1] - gcBefore[1]};
          long waited = awaitReader(streamed);
          catchUpMs = waited < 0 ? -1 : waited / 1e6;
          atEnd = ChangeLogFiles.of(dataDir, STREAMED);
          plainLog = ChangeLogFiles.of(dataDir, PLAIN);
        } finally {
          reader.close();
          pool.shutdownNow();
        }
        System.err.println("stopping the node cleanly (it flushes every memtable) ...");
        long stopping = now();
        peer.stop();
        double stopSeconds = (now() - stopping) / 1e9;
        ChangeLogFiles afterStop = ChangeLogFiles.of(dataDir, STREAMED);
        ChangeStreamReport.Setup setup = new ChangeStreamReport.Setup(ResultsFile.command(ChangeStreamBench.class,
            spec), quick, String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()), loadBefore,
            ResultsFile.loadAverage(), readySeconds, writers, valueBytes, rounds, seconds, warmUpSeconds, heartbeatMs,
            gc[0], gc[1]);
        String report = new ChangeStreamReport(setup, roundsRun, writes(plain), writes(streamed),
            delays(streamed, streamedStarts),
            new ChangeStreamReport.Reader(catchUpMs, reader.heartbeats.get(), reader.closes.get(),
                reader.reopened.get(), reader.givenUp.get(), reader.failure()),
            new ChangeStreamReport.Kept(streamed.acknowledged.get(), data.rowBytes(), atEnd, afterStop, plainLog,
                stopSeconds),
            new ChangeStreamReport.NodeLog(log.warnings(), log.errors(), log.first())).markdown();
        System.out.print(report);
        ResultsFile.write(out, report);
        System.err.println("wrote " + out);
      }
    }
    return 0;
  }

  /** The garbage collections of this JVM so far: how many, and their milliseconds together. */
  private static long[] collections() {
    long count = 0;
    long millis = 0;
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, b.getCollectionCount());
      millis += Math.max(0, b.getCollectionTime());
    }
    return new long[] {count, millis};
  }

  private long now() {
    return System.nanoTime() - origin;
  }

  /** Writes new rows into {@code t} from every writer for {@code secs}; returns the writes per second. */
  private double window(ExecutorService pool, BigtableDataClient client, Dataset data, Target t, double secs,
      boolean timed) throws InterruptedException, ExecutionException {
    long start = now();
    long deadline = start + (long) (secs * 1e9);
    List<Future<Long>> done = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      done.add(pool.submit(() -> {
        long n = 0;
        while (now() < deadline) {
          write(client, data, t, timed);
          n++;
        }
        return n;
      }));
    }
    long writes = 0;
    for (Future<Long> f : done) {
      writes += f.get();
    }
    long nanos = now() - start;
    if (timed) {
      t.timedWrites += writes;
      t.timedNanos += nanos;
    }
    return writes * 1e9 / nanos;
  }

  /** Writes the next new row of {@code t} with one MutateRow, and stamps it if {@code timed}. */
  private void write(BigtableDataClient client, Dataset data, Target t, boolean timed) {
    int i = t.next.getAndIncrement();
    RowMutation m = RowMutation.create(TableId.of(t.table), UnsafeByteOperations.unsafeWrap(data.key(i)))
        .setCell(FAMILY, QUALIFIER, UnsafeByteOperations.unsafeWrap(data.value(i)));
    long called = now();
    client.mutateRow(m);
    long returned = now();
    if (timed) {
      t.called.set(i, called);
      t.returned.set(i, returned);
    }
    t.acknowledged.incrementAndGet();
  }

  /** The reader's listener: stamps the change's write with the time it arrived. */
  private void arrived(Target t, ChangeStreamMutation change) {
    long at = now();
    int i = writeIndex(change.getRowKey());
    if (i < 0) {
      t.unknown.incrementAndGet();
    } else if (t.arrived.setFirst(i, at)) {
      t.seen.incrementAndGet();
    } else {
      t.seenTwice.incrementAndGet();
    }
  }

  /** The index of the write of row {@code key} ({@code row%010d}), or -1 if the key is not one of ours. */
  private static int writeIndex(ByteString key) {
    if (key.size() != Dataset.KEY_BYTES || !key.startsWith(ByteString.copyFromUtf8("row"))) {
      return -1;
    }
    long i = 0;
    for (int p = 3; p < key.size(); p++) {
      int d = key.byteAt(p) - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      i = i * 10 + d;
    }
    return i < MAX_WRITES ? (int) i : -1;
  }

  /**
   * Waits until the reader has seen every acknowledged write of {@code t}, or for {@link
   * #catchUpSeconds}; returns the nanoseconds it waited, or -1 if it gave up.
   */
  private long awaitReader(Target t) throws InterruptedException {
    long start = now();
    long until = start + (long) (catchUpSeconds * 1e9);
    while (t.seen.get() < t.acknowledged.get()) {
      if (now() > until) {
        return -1;
      }
      TimeUnit.MILLISECONDS.sleep(1);
    }
    return now() - start;
  }

  /** The timed writes of {@code t}: how many, how fast, and the calls' latencies. */
  private static Writes writes(Target t) {
    long[] latency = new long[Math.toIntExact(t.timedWrites)];
    int n = 0;
    for (int i = 0; i < t.next.get(); i++) {
      long returned = t.returned.get(i);
      if (returned != 0) {
        latency[n++] = returned - t.called.get(i);
      }
    }
    long[] sorted = Arrays.copyOf(latency, n);
    Arrays.sort(sorted);
    return new Writes(t.table, t.timedWrites, t.timedNanos, Spread.of(sorted));
  }

  /**
   * How long the timed writes of {@code t} took to reach the reader, with the changes slower
   * than {@link #SLOW_NANOS} grouped into stalls by the windows starting at {@code windowStarts}.
   */
  private static Delays delays(Target t, List<Long> windowStarts) {
    long[] fromReturn = new long[Math.toIntExact(t.timedWrites)];
    long[] fromCall = new long[fromReturn.length];
    int n = 0;
    int clamped = 0;
    int missing = 0;
    List<long[]> slow = new ArrayList<>(); // {returned, delay}
    for (int i = 0; i < t.next.get(); i++) {
      long returned = t.returned.get(i);
      if (returned == 0) {
        continue;
      }
      long arrived = t.arrived.get(i);
      if (arrived == 0) {
        missing++;
        continue;
      }
      long d = arrived - returned;
      if (d < 0) {
        clamped++;
        d = 0;
      }
      fromReturn[n] = d;
      fromCall[n++] = arrived - t.called.get(i);
      if (d > SLOW_NANOS) {
        slow.add(new long[] {returned, d});
      }
    }
    long[] a = Arrays.copyOf(fromReturn, n);
    long[] b = Arrays.copyOf(fromCall, n);
    Arrays.sort(a);
    Arrays.sort(b);
    return new Delays(Spread.of(a), Spread.of(b), clamped, missing,
        t.seen.get(), t.seenTwice.get(), t.unknown.get(), stalls(slow, windowStarts));
  }

  /** A change that reached the reader this long after its acknowledgement is slow. */
  static final long SLOW_NANOS = 100_000_000L;
  /** Slow changes acknowledged less than this apart belong to one stall. */
  static final long STALL_GAP_NANOS = 1_000_000_000L;

  /** {@code slow} ({returned, delay} pairs) grouped into stalls, each placed in its window. */
  private static List<Stall> stalls(List<long[]> slow, List<Long> windowStarts) {
    slow.sort(Comparator.comparingLong(x -> x[0]));
    List<Stall> stalls = new ArrayList<>();
    int from = 0;
    for (int k = 1; k <= slow.size(); k++) {
      if (k < slow.size() && slow.get(k)[0] - slow.get(k - 1)[0] <= STALL_GAP_NANOS) {
        continue;
      }
      long first = slow.get(from)[0];
      long longest = 0;
      for (int j = from; j < k; j++) {
        longest = Math.max(longest, slow.get(j)[1]);
      }
      int window = 0;
      while (window + 1 < windowStarts.size() && windowStarts.get(window + 1) <= first) {
        window++;
      }
      stalls.add(new Stall(window + 1, (first - windowStarts.get(window)) / 1e9, k - from, longest));
      from = k;
    }
    return stalls;
  }
}
