package io.tabula.bench.e2e;

import io.tabula.bench.Dataset;
import io.tabula.bench.ResultsFile;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The paper's Figure 6 (§7) end to end: one Tabula node in its own JVM on 127.0.0.1, driven
 * over gRPC by the Tabula Java client and by Google's official Java client, one after the
 * other, workload by workload. Each client writes its own table (sequential write, then a
 * random-order rewrite of the same rows), then reads it back (random reads over the whole
 * table, sequential reads, scans); and both read a table of their own kind (random reads of
 * 100 MB in an in-memory locality group, as the paper's "random reads (mem)").
 * Requests are batched and several are kept in flight to get throughput. A benchmark, never
 * a test.
 */
@Command(name = "figure6-e2e", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Figure 6 workloads against a Tabula node process: Tabula client vs official Java client.")
public final class EndToEndBench implements Callable<Integer> {
  private static final String TABLE_PREFIX = "fig6_";
  /** The table "random reads (mem)" reads: its default locality group is held in memory. */
  private static final String MEM_TABLE = TABLE_PREFIX + "mem";
  /** The paper's "random reads (mem)" used 100 MB per tablet server, so that it fit in memory. */
  private static final long MEM_BYTES = 100_000_000L;
  /** Whether {@link #MEM_TABLE} is made and loaded. */
  private boolean memLoaded;
  private String endpoint;
  private static final long WARM_UP_SALT = 0x3A7E;
  /** The warm-up ends once the JIT compilers used less than this share of one core in a cycle. */
  private static final double JIT_QUIET_SHARE = 0.05;
  /** The node counts as idle after a write run when it uses less than this share of a core. */
  private static final double IDLE_SHARE = 0.10;
  private static final int SETTLE_MAX_SECONDS = 180;

  @Option(names = "--quick", description = "Small size: 60,000 rows, one round, 4 s timed read windows, 2 s "
      + "warm-ups (overrides those options).")
  private boolean quick;

  @Option(names = "--rows", description = "Rows written by each client (1000-byte values); default: ${DEFAULT-VALUE}",
      defaultValue = "300000")
  private int rows;

  @Option(names = "--value-bytes", description = "Bytes of every value; default: ${DEFAULT-VALUE}",
      defaultValue = "1000")
  private int valueBytes;

  @Option(names = "--clients", split = ",", description = "tabula, official; default: both")
  private List<String> clientNames = List.of("tabula", "official");

  @Option(names = "--workloads", split = ",",
      description = "seq-write, random-write, random-read, random-read-mem, seq-read, scan; default: all")
  private List<String> workloadIds;

  @Option(names = "--official-accept-gzip", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Whether the official client advertises gzip responses, as it does by default (the node "
          + "answers uncompressed either way); --no-official-accept-gzip turns it off")
  private boolean officialAcceptGzip;

  @Option(names = "--official-window-kib", description = "The official client's HTTP/2 receive window in KiB, "
      + "0 for the library's default of 1 MiB; default: ${DEFAULT-VALUE}, the Tabula client's", defaultValue = "4096")
  private int officialWindowKib;

  @Option(names = "--official-channels", description = "Connections in the official client's channel pool; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "2")
  private int officialChannels;

  @Option(names = "--concurrency", description = "Requests in flight per client, enough to keep the node busy "
      + "(the paper ran enough clients to saturate its servers; with 16 both cores were about a tenth idle); "
      + "default: ${DEFAULT-VALUE}", defaultValue = "32")
  private int concurrency;

  @Option(names = "--scan-concurrency", description = "Scans in flight per client: each is a long back-pressured "
      + "stream, and 16 keep both cores busy (with 32 the node spent a quarter to a third more "
      + "CPU per row); default: ${DEFAULT-VALUE}", defaultValue = "16")
  private int scanConcurrency;

  @Option(names = "--write-batch", description = "Rows per write request; default: ${DEFAULT-VALUE}",
      defaultValue = "200")
  private int writeBatch;

  @Option(names = "--read-batch", description = "Row keys per read request; default: ${DEFAULT-VALUE}",
      defaultValue = "25")
  private int readBatch;

  @Option(names = "--scan-chunk", description = "Rows per scan request (a key range); default: ${DEFAULT-VALUE}",
      defaultValue = "5000")
  private int scanChunk;

  @Option(names = "--read-seconds", description = "Timed window of each read workload; default: ${DEFAULT-VALUE}",
      defaultValue = "10")
  private int readSeconds;

  @Option(names = "--warmup-seconds",
      description = "Untimed reads before each read workload; default: ${DEFAULT-VALUE}",
      defaultValue = "2")
  private int warmupSeconds;

  @Option(names = "--warmup-max-seconds", description = "Longest first warm-up of each client: cycles of untimed "
      + "writes, reads and scans until the JIT compilers of both JVMs are nearly idle; default: ${DEFAULT-VALUE}",
      defaultValue = "120")
  private int warmupMaxSeconds;

  @Option(names = "--rounds", description = "Runs of each workload per client, taking turns; the report pools "
      + "them; default: ${DEFAULT-VALUE}", defaultValue = "2")
  private int rounds;

  @Option(names = "--settle-seconds", description = "Least pause after each write run, before waiting for the node "
      + "to idle; default: ${DEFAULT-VALUE}", defaultValue = "6")
  private int settleSeconds;

  @Option(names = "--block-cache-mb", description = "The node's block cache (tabula.node.block-cache); "
      + "default: ${DEFAULT-VALUE}", defaultValue = "32")
  private int blockCacheMb;

  @Option(names = "--memtable-mb", description = "The node's memtable size (tabula.node.memtable-bytes); "
      + "default: ${DEFAULT-VALUE}", defaultValue = "16")
  private int memtableMb;

  @Option(names = "--node-java-opts", description = "JVM options of the node process; default: ${DEFAULT-VALUE}",
      defaultValue = "-Xms4g -Xmx4g -XX:+UseG1GC")
  private String nodeJavaOpts;

  @Option(names = "--node-config", description = "HOCON added to the node's settings, e.g. "
      + "'tabula.node.memtable-slabs = off'; default: none", defaultValue = "")
  private String nodeConfigExtra;

  @Option(names = "--seed", description = "Seed of values and key orders; default: ${DEFAULT-VALUE}",
      defaultValue = "42")
  private long seed;

  @Option(names = "--timeout-minutes", description = "Stop everything after this long; default: ${DEFAULT-VALUE}",
      defaultValue = "30")
  private int timeoutMinutes;

  @Option(names = "--out", description = "Markdown result file; default: bench/results/figure6-e2e.md, "
      + "or figure6-e2e-quick.md with --quick")
  private Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  /** After each write run: how long the node took to idle and the CPU it spent, for the report. */
  private final List<String> settled = new ArrayList<>();

  /** How long each client's first warm-up took, for the report. */
  private String warmUps = "";

  /** The node process, whose CPU time each timed window records. */
  private long nodePid;

  public static void main(String[] args) {
    System.exit(new CommandLine(new EndToEndBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (out == null) {
      out = Path.of(quick ? "bench/results/figure6-e2e-quick.md" : "bench/results/figure6-e2e.md");
    }
    String loadBefore = ResultsFile.loadAverage();
    if (quick) {
      rows = 60_000;
      rounds = 1;
      readSeconds = 4;
      warmupSeconds = 2;
    }
    List<E2eWorkload> workloads = workloadIds == null ? List.of(E2eWorkload.values())
        : workloadIds.stream().map(E2eWorkload::byId).toList();
    if (rows < 1 || valueBytes < 1 || concurrency < 1 || scanConcurrency < 1 || writeBatch < 1 || readBatch < 1 || scanChunk < 1
        || readSeconds < 1 || rounds < 1 || warmupSeconds < 0 || warmupMaxSeconds < 0 || settleSeconds < 0 || blockCacheMb < 1
        || memtableMb < 1 || readBatch > rows) {
      throw new CommandLine.ParameterException(spec.commandLine(), "sizes, counts and times must be positive "
          + "(--warmup-seconds and --settle-seconds may be 0), and --read-batch at most --rows");
    }
    startWatchdog("figure6-e2e", Duration.ofMinutes(timeoutMinutes));
    Dataset data = new Dataset(rows, valueBytes, seed);
    String config = nodeConfig();
    System.err.println("starting a Tabula node in its own JVM ...");
    long t0 = System.nanoTime();
    try (NodeProcess node = NodeProcess.start(config, List.of(nodeJavaOpts.trim().split("\\s+")),
        Duration.ofSeconds(90))) {
      nodePid = node.pid();
      endpoint = node.endpoint();
      System.err.printf(Locale.ROOT, "node pid %d serving on %s after %.1f s%n", node.pid(), node.endpoint(),
          (System.nanoTime() - t0) / 1e9);
      List<ClientUnderTest> clients = new ArrayList<>();
      try {
        for (String c : clientNames) {
          clients.add(switch (c.trim().toLowerCase(Locale.ROOT)) {
            case "tabula" -> new TabulaClientUnderTest(node.endpoint(), data, writeBatch);
            case "official" -> new OfficialClientUnderTest(OfficialEndpoint.emulator(node.port()), data,
                officialAcceptGzip, officialWindowKib * 1024, officialChannels);
            default -> throw new CommandLine.ParameterException(spec.commandLine(), "unknown client '" + c
                + "'; known: tabula, official");
          });
        }
        List<String> warmUps = new ArrayList<>();
        for (int k = 0; k < clients.size(); k++) {
          clients.get(k).createTable(table(k));
          warmUps.add(String.format(Locale.ROOT, "%s %.0f s", clients.get(k).name(), warmUp(clients.get(k), k, data)));
        }
        // The scratch tables fall quiet now and their tablets compact: not in the first timed window.
        CpuUse warmedUp = CpuUse.now(nodePid);
        double idleAfter = awaitIdle(System.nanoTime());
        double cpuAfter = CpuUse.now(nodePid).minus(warmedUp).nodeNanos() / 1e9;
        System.err.printf(Locale.ROOT, "%s after the warm-ups: the node idled after %.0f s, %.1f s of node CPU%n",
            Instant.now(), idleAfter, cpuAfter);
        this.warmUps = String.join(", ", warmUps) + String.format(Locale.ROOT, "; then the node took %.0f s "
            + "(%.1f s of CPU) to idle, compacting the scratch tables, before the first timed window", idleAfter,
            cpuAfter);
        List<Measured> results = new ArrayList<>();
        int turn = 0;
        for (E2eWorkload w : workloads) {
          Measured[] sum = new Measured[clients.size()];
          for (int round = 0; round < rounds; round++) {
            // Alternate which client goes first, so neither always runs right after the other's writes.
            for (int j = 0; j < clients.size(); j++) {
              int k = turn % 2 == 0 ? j : clients.size() - 1 - j;
              System.err.printf(Locale.ROOT, "%s %s with the %s ...%n", Instant.now(), w.id(),
                  clients.get(k).name());
              Measured m = run(w, clients.get(k), table(k), data);
              System.err.printf(Locale.ROOT, "%s %s with the %s: %,.0f values/s, %.1f MB/s, p50 %.2f ms, "
                  + "p99 %.2f ms; CPU us/value node %.1f, client %.1f; %.2f cores busy%n", Instant.now(), w.id(),
                  m.client(), m.valuesPerSecond(), m.megabytesPerSecond(), m.result().latencyMs(0.5),
                  m.result().latencyMs(0.99), m.nodeCpuMicrosPerValue(), m.clientCpuMicrosPerValue(), m.coresBusy());
              sum[k] = sum[k] == null ? m : sum[k].plus(m);
              if (!node.isAlive()) {
                throw new IllegalStateException("the node died:\n" + node.tail());
              }
            }
            turn++;
          }
          results.addAll(Arrays.asList(sum));
        }
        String report = new E2eReport(ResultsFile.command(EndToEndBench.class, spec), settings(data), config,
            results, loadBefore, ResultsFile.loadAverage()).markdown();
        System.out.print(report);
        ResultsFile.write(out, report);
        System.err.println("wrote " + out);
        return 0;
      } finally {
        for (ClientUnderTest c : clients) {
          c.close();
        }
      }
    }
  }

  private static String table(int client) {
    return TABLE_PREFIX + client;
  }

  /**
   * Untimed cycles of writes, random reads and scans on a scratch table of the client's own,
   * until the JIT compilers of both JVMs (the node's and this one) used less than {@value
   * #JIT_QUIET_SHARE} of a core during a cycle, or for at most {@code warmupMaxSeconds}: the
   * timed windows then measure compiled code, not the compilers. Returns the seconds it took.
   */
  private double warmUp(ClientUnderTest c, int k, Dataset data) throws Exception {
    String table = TABLE_PREFIX + "warmup_" + k;
    c.createTable(table);
    int[] order = data.keyOrder();
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(warmupMaxSeconds);
    long pid = ProcessHandle.current().pid();
    long[] next = {0};
    int written = 0;
    double jitShare;
    do {
      long cycleStart = System.nanoTime();
      long jitBefore = jitNanos(pid);
      long writeUntil = cycleStart + TimeUnit.SECONDS.toNanos(3);
      InFlight.Result w = InFlight.run(concurrency, Long.MAX_VALUE, writeUntil, n -> {
        int from = (int) (next[0]++ * writeBatch % order.length);
        return c.write(table, order, from, Math.min(order.length, from + writeBatch));
      });
      written = (int) Math.min(order.length, Math.max(written, w.values()));
      int known = written;
      int batch = Math.min(readBatch, Math.max(1, known));
      // Rows written (the first `known` of `order`), in random order, so the reads are random reads.
      int[] keys = Arrays.stream(data.permutation(WARM_UP_SALT)).filter(row -> row < known).toArray();
      InFlight.run(concurrency, Long.MAX_VALUE, System.nanoTime() + TimeUnit.SECONDS.toNanos(3), n -> {
        int from = (int) (n * batch % Math.max(1, keys.length - batch + 1));
        return c.read(table, keys, from, from + batch);
      });
      // Scans of the rows written in key order, so the scan path is compiled too.
      int chunk = Math.min(scanChunk, Math.max(1, known));
      InFlight.run(concurrency, Long.MAX_VALUE, System.nanoTime() + TimeUnit.SECONDS.toNanos(2), n -> {
        int from = (int) (n * chunk % Math.max(1, known - chunk + 1));
        return c.scan(table, from, from + chunk);
      });
      long cycle = System.nanoTime() - cycleStart;
      long jit = jitNanos(pid);
      jitShare = jitBefore < 0 || jit < 0 ? 0 : (double) (jit - jitBefore) / cycle;
      System.err.printf(Locale.ROOT, "%s warming up the %s: JIT compilers used %.0f%% of a core in the last "
          + "cycle%n", Instant.now(), c.name(), 100 * jitShare);
    } while (jitShare >= JIT_QUIET_SHARE && System.nanoTime() < end);
    double seconds = (System.nanoTime() - start) / 1e9;
    System.err.printf(Locale.ROOT, "%s warmed up the %s in %.0f s: %,d rows written, read back and scanned "
        + "untimed%n", Instant.now(), c.name(), seconds, written);
    return seconds;
  }

  /** The JIT compilers' CPU time in the node and this process, or -1 where it cannot be read. */
  private long jitNanos(long self) {
    OptionalLong node = JitActivity.compilerNanos(nodePid);
    OptionalLong client = JitActivity.compilerNanos(self);
    return node.isPresent() && client.isPresent() ? node.getAsLong() + client.getAsLong() : -1;
  }

  /** Settings of the node process: the data set must outgrow its block cache; every write is fsynced. */
  private String nodeConfig() {
    return String.format(Locale.ROOT, """
        # Written by the end-to-end Figure 6 benchmark.
        tabula.node {
          block-cache = %dMiB
          memtable-bytes = %dMiB
          durability = fsync
        }
        """, blockCacheMb, memtableMb) + (nodeConfigExtra.isBlank() ? "" : nodeConfigExtra + "\n");
  }

  private E2eReport.Settings settings(Dataset data) {
    return new E2eReport.Settings(rows, valueBytes, data.rowBytes(), concurrency, scanConcurrency, writeBatch, readBatch, scanChunk,
        readSeconds, warmupSeconds, settleSeconds, rounds, blockCacheMb, memtableMb, memRows(data), nodeJavaOpts, seed,
        officialWindowKib, officialChannels, warmUps, String.join("; ", settled));
  }

  /** The rows of the in-memory table: {@link #MEM_BYTES} of rows, or all of them if fewer. */
  private int memRows(Dataset data) {
    return (int) Math.max(readBatch, Math.min(rows, MEM_BYTES / data.rowBytes()));
  }

  /**
   * Makes {@link #MEM_TABLE} with client {@code c}, holds its default locality group (its one
   * family's) in memory through the Tabula client's admin call (the Cloud Bigtable API has
   * none), and writes its first {@link #memRows} rows, untimed; then waits for the node to
   * idle, so the rows are in SSTables read whole into memory. Once: every client reads it.
   */
  private void loadInMemoryTable(ClientUnderTest c, Dataset data) throws Exception {
    if (memLoaded) {
      return;
    }
    c.createTable(MEM_TABLE);
    try (io.tabula.client.TabulaClient admin = io.tabula.client.TabulaClient.connect(endpoint)) {
      admin.admin().setInMemory(MEM_TABLE, "default", true).toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    int[] order = java.util.stream.IntStream.range(0, memRows(data)).toArray();
    long requests = (order.length + writeBatch - 1) / writeBatch;
    long start = System.nanoTime();
    InFlight.run(concurrency, requests, Long.MAX_VALUE, k -> {
      int from = (int) (k * writeBatch);
      return c.write(MEM_TABLE, order, from, Math.min(order.length, from + writeBatch));
    });
    double idle = awaitIdle(System.nanoTime());
    System.err.printf(Locale.ROOT, "%s loaded %,d rows into %s (in-memory locality group) in %.1f s; the node "
        + "idled after %.0f s%n", Instant.now(), order.length, MEM_TABLE, (System.nanoTime() - start) / 1e9, idle);
    memLoaded = true;
  }

  private Measured run(E2eWorkload w, ClientUnderTest c, String table, Dataset data) throws Exception {
    return switch (w) {
      case SEQUENTIAL_WRITE -> write(w, c, table, data, data.keyOrder());
      case RANDOM_WRITE -> write(w, c, table, data, data.permutation(0x5EEDL));
      case RANDOM_READ -> randomRead(w, c, table, data, rows);
      case RANDOM_READ_HOT -> {
        loadInMemoryTable(c, data);
        yield randomRead(w, c, MEM_TABLE, data, memRows(data));
      }
      case SEQUENTIAL_READ -> sequentialRead(w, c, table, data);
      case SCAN -> scan(w, c, table, data);
    };
  }

  /** Writes every row in {@code order}, {@code writeBatch} rows per request. */
  private Measured write(E2eWorkload w, ClientUnderTest c, String table, Dataset data, int[] order) throws Exception {
    long requests = (order.length + writeBatch - 1) / writeBatch;
    CpuUse before = CpuUse.now(nodePid);
    InFlight.Result r = InFlight.run(concurrency, requests, Long.MAX_VALUE, k -> {
      int from = (int) (k * writeBatch);
      return c.write(table, order, from, Math.min(order.length, from + writeBatch));
    });
    if (r.values() != order.length) {
      throw new IllegalStateException(c.name() + " wrote " + r.values() + " rows of " + order.length);
    }
    CpuUse after = CpuUse.now(nodePid);
    settle(c.name() + " " + w.id(), after, order.length);
    return new Measured(w, c.name(), c.writeApi(), writeBatch, r, data.rowBytes(), after.minus(before));
  }

  /**
   * After a write run: {@code settleSeconds} (a tablet compacts once it has had no writes
   * for two of its 2-second ticks), then until the node is idle (under {@value #IDLE_SHARE}
   * of a core for two seconds running: its flushes and compactions done, at most
   * {@value #SETTLE_MAX_SECONDS} s), so the next workload is not measured against a
   * compaction backlog. How long that took, and the node CPU it took per value written
   * (work the timed window left behind), go into the report.
   */
  private void settle(String what, CpuUse windowEnd, long values) throws InterruptedException {
    double seconds = awaitIdle(System.nanoTime());
    double micros = CpuUse.now(nodePid).minus(windowEnd).nodeNanos() / 1e3 / values;
    settled.add(String.format(Locale.ROOT, "%s %.0f s, %.1f us/value", what, seconds, micros));
    System.err.printf(Locale.ROOT, "%s after %s: the node idled after %.0f s, %.1f us of node CPU per value "
        + "written%n", Instant.now(), what, seconds, micros);
  }

  /**
   * Waits {@code settleSeconds} from {@code start}, then until the node has used under
   * {@value #IDLE_SHARE} of a core for two seconds running (at most {@value
   * #SETTLE_MAX_SECONDS} s after {@code start}); returns the seconds since {@code start}.
   */
  private double awaitIdle(long start) throws InterruptedException {
    TimeUnit.SECONDS.sleep(settleSeconds);
    return CpuUse.awaitIdle(nodePid, start, IDLE_SHARE, Duration.ofSeconds(SETTLE_MAX_SECONDS));
  }


  /** Reads {@code readBatch} distinct, uniformly random rows of {@code [0, range)} per request. */
  private Measured randomRead(E2eWorkload w, ClientUnderTest c, String table, Dataset data, int range)
      throws Exception {
    SplittableRandom random = new SplittableRandom(seed ^ w.ordinal());
    int batch = Math.min(readBatch, range);
    LongFunction<CompletionStage<Integer>> request = k -> {
      int[] keys = distinct(random, range, batch);
      return c.read(table, keys, 0, keys.length);
    };
    return timed(w, c, c.readApi(), batch, data, request, concurrency);
  }

  /** Reads {@code readBatch} consecutive rows per request, in key order from a random row, wrapping. */
  private Measured sequentialRead(E2eWorkload w, ClientUnderTest c, String table, Dataset data) throws Exception {
    int start = new SplittableRandom(seed).nextInt(rows);
    LongFunction<CompletionStage<Integer>> request = k -> {
      int[] keys = new int[readBatch];
      for (int i = 0; i < readBatch; i++) {
        keys[i] = (int) ((start + k * readBatch + i) % rows);
      }
      return c.read(table, keys, 0, keys.length);
    };
    return timed(w, c, c.readApi(), readBatch, data, request, concurrency);
  }

  /** Scans the table in key ranges of {@code scanChunk} rows, several ranges at once, wrapping. */
  private Measured scan(E2eWorkload w, ClientUnderTest c, String table, Dataset data) throws Exception {
    int chunks = (rows + scanChunk - 1) / scanChunk;
    LongFunction<CompletionStage<Integer>> request = k -> {
      int from = (int) (k % chunks) * scanChunk;
      return c.scan(table, from, Math.min(rows, from + scanChunk));
    };
    return timed(w, c, c.scanApi(), Math.min(rows, scanChunk), data, request, scanConcurrency);
  }

  /** A warm-up of {@code warmupSeconds}, then the timed window of {@code readSeconds}, {@code inFlight} requests at a time. */
  private Measured timed(E2eWorkload w, ClientUnderTest c, String api, int perRequest, Dataset data,
      LongFunction<CompletionStage<Integer>> request, int inFlight) throws Exception {
    if (warmupSeconds > 0) {
      InFlight.run(inFlight, Long.MAX_VALUE, System.nanoTime() + TimeUnit.SECONDS.toNanos(warmupSeconds),
          request);
    }
    CpuUse before = CpuUse.now(nodePid);
    InFlight.Result r = InFlight.run(inFlight, Long.MAX_VALUE,
        System.nanoTime() + TimeUnit.SECONDS.toNanos(readSeconds), request);
    CpuUse cpu = CpuUse.now(nodePid).minus(before);
    return new Measured(w, c.name(), api, perRequest, r, data.rowBytes(), cpu);
  }

  /** {@code n} distinct values in {@code [0, range)}, {@code n <= range}. */
  static int[] distinct(SplittableRandom random, int range, int n) {
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      int v;
      boolean seen;
      do {
        v = random.nextInt(range);
        seen = false;
        for (int j = 0; j < i && !seen; j++) {
          seen = out[j] == v;
        }
      } while (seen);
      out[i] = v;
    }
    return out;
  }

  /** Ends the process (the node's shutdown hook kills it) if the run takes longer than {@code limit}. */
  static void startWatchdog(String bench, Duration limit) {
    Thread t = new Thread(() -> {
      try {
        Thread.sleep(limit.toMillis());
      } catch (InterruptedException e) {
        return;
      }
      System.err.println(bench + ": still running after " + limit + "; stopping the node and giving up");
      System.exit(3);
    }, bench + "-watchdog");
    t.setDaemon(true);
    t.start();
  }
}
