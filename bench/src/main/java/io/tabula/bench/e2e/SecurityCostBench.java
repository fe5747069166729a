package io.tabula.bench.e2e;

import io.tabula.bench.Dataset;
import io.tabula.bench.ResultsFile;
import io.tabula.bench.JfrDigest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What TLS and bearer-token authentication cost a node, never part of the test verdict: two
 * node JVMs with the same settings, one plain and one with TLS on its ports and an auth file
 * with a static token ({@link NodeSecurityFiles}), driven side by side by Google's official
 * Java client with the same production settings but for TLS and credentials ({@link
 * OfficialEndpoint#plaintext}, {@link OfficialEndpoint#secure}). Batched writes and reads,
 * (optionally) scans, and single-row writes and reads ({@link SecurityWorkload}) each run on
 * one node and then on the other, and the report gives the node's CPU per value, secured over
 * plain, against the limits.
 *
 * <p>Both nodes run for the whole bench (started one after the other; timing starts after each
 * answers {@code /ready}), and their windows take turns, which goes first alternating by
 * workload and round, so both run under whatever else the shared machine runs at the time.
 * Before the rounds, untimed cycles of every workload on both run until the JIT compilers of
 * both nodes and of the client fall quiet: with the node's own 20 s warm-up alone they used
 * half a core in the first timed windows. Each round runs every workload on each node as fast
 * as the client goes, which is what the limits judge.
 *
 * <p>With {@code --paced-share}, each round also runs every workload on both nodes paced at the
 * same rate, that share of the slower node's full-speed rate: the client shares the two cores
 * with the nodes and pays for TLS itself, so at full speed the secured node serves fewer values
 * per second, and a node serving fewer spends more CPU on each. Paced calls arrive evenly
 * spaced, though, each waking the node's threads on its own, and on this machine that doubled
 * the CPU per value of both nodes and made it vary far more than TLS changes it.
 */
@Command(name = "security", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Node CPU per value with TLS and authentication against a plain node, side by side.")
public final class SecurityCostBench implements Callable<Integer> {
  private static final String TABLE = "security";
  /** The share of one core under which a node counts as idle after a write window. */
  private static final double IDLE_SHARE = 0.10;
  /** The share of one core under which a JIT compiler counts as quiet over a warm-up cycle. */
  private static final double JIT_QUIET_SHARE = 0.05;

  @Option(names = "--rows", description = "Rows of the table each node reads and rewrites (loaded untimed "
      + "first); default: ${DEFAULT-VALUE}", defaultValue = "100000")
  private int rows;

  @Option(names = "--value-bytes", description = "Bytes of every value; default: ${DEFAULT-VALUE}",
      defaultValue = "1000")
  private int valueBytes;

  @Option(names = "--rounds", description = "Rounds of every workload on both nodes; default: ${DEFAULT-VALUE}",
      defaultValue = "3")
  private int rounds;

  @Option(names = "--seconds", description = "Timed window of each workload on each node; default: "
      + "${DEFAULT-VALUE}", defaultValue = "10")
  private int seconds;

  @Option(names = "--paced-share", description = "Also run each workload on both nodes paced at this share of "
      + "the slower node's full-speed rate in the round, e.g. 0.7; default: 0, not paced", defaultValue = "0")
  private double pacedShare;

  @Option(names = "--warm-up-seconds", description = "Untimed window of each workload on each node in a warm-up "
      + "cycle; default: ${DEFAULT-VALUE}", defaultValue = "4")
  private int warmUpSeconds;

  @Option(names = "--warm-up-max-seconds", description = "Warm-up cycles run until the JIT compilers of both "
      + "nodes and of the client used under 5%% of a core in one, for at most this long; default: ${DEFAULT-VALUE}",
      defaultValue = "150")
  private int warmUpMaxSeconds;

  @Option(names = "--write-batch", description = "Rows per batched write (one MutateRows); default: "
      + "${DEFAULT-VALUE}", defaultValue = "200")
  private int writeBatch;

  @Option(names = "--read-batch", description = "Row keys per batched read (one ReadRows); default: "
      + "${DEFAULT-VALUE}", defaultValue = "25")
  private int readBatch;

  @Option(names = "--scan-chunk", description = "Rows per scan (one streamed ReadRows of a key range); default: "
      + "${DEFAULT-VALUE}", defaultValue = "5000")
  private int scanChunk;

  @Option(names = "--concurrency", description = "Batched calls in flight; default: ${DEFAULT-VALUE}",
      defaultValue = "32")
  private int concurrency;

  @Option(names = "--scan-concurrency", description = "Scans in flight; default: ${DEFAULT-VALUE}",
      defaultValue = "16")
  private int scanConcurrency;

  @Option(names = "--in-flight", description = "Single-row calls in flight, from one thread; default: "
      + "${DEFAULT-VALUE}", defaultValue = "64")
  private int inFlight;

  @Option(names = "--workloads", split = ",", description = "Some of: ${COMPLETION-CANDIDATES}; default: all but "
      + "SCAN")
  private List<SecurityWorkload> workloads = List.of(SecurityWorkload.BATCHED_WRITE, SecurityWorkload.SINGLE_WRITE,
      SecurityWorkload.BATCHED_READ, SecurityWorkload.SINGLE_READ);

  @Option(names = "--settle-idle-seconds", description = "After each write window, wait until the node used under "
      + "a tenth of a core for this many seconds running (longer than the 4 s after which a quiet tablet compacts); "
      + "default: ${DEFAULT-VALUE}", defaultValue = "8")
  private int settleIdleSeconds;

  @Option(names = "--settle-max-seconds", description = "... but no longer than this; default: ${DEFAULT-VALUE}",
      defaultValue = "60")
  private int settleMaxSeconds;

  @Option(names = "--node-java-opts", description = "JVM options of both nodes; default: ${DEFAULT-VALUE}",
      defaultValue = "-Xms2g -Xmx2g -XX:+UseG1GC -XX:+AlwaysPreTouch")
  private String nodeJavaOpts;

  @Option(names = "--node-config", description = "HOCON added to both nodes' settings (default: none, the "
      + "node's defaults, its warm-up included)")
  private String nodeConfig = "";

  @Option(names = "--seed", description = "Seed of values and key orders; default: ${DEFAULT-VALUE}",
      defaultValue = "42")
  private long seed;

  @Option(names = "--quick", description = "A sanity run of about three minutes: 20,000 rows, one round, 3 s "
      + "windows, 2 s warm-up windows for at most 30 s, 4 s settles (overrides those options).")
  private boolean quick;

  @Option(names = "--timeout-minutes", description = "Stop everything after this long; default: ${DEFAULT-VALUE}",
      defaultValue = "40")
  private int timeoutMinutes;

  @Option(names = "--node-jfr", description = "Record each node with the flight recorder into this folder "
      + "(plain.jfr, secured.jfr) and add where its time went in each timed window to the report")
  private Path nodeJfr;

  @Option(names = "--out", description = "Markdown result file; default: bench/results/security.md, or "
      + "security-quick.md with --quick")
  private Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  /** Every timed window so far. */
  private final List<SecurityReport.Window> windows = new ArrayList<>();
  /** When each node's timed windows ran, for its flight recording. */
  private final List<JfrDigest.Window> plainRecorded = new ArrayList<>();
  private final List<JfrDigest.Window> secureRecorded = new ArrayList<>();

  public static void main(String[] args) {
    System.exit(new CommandLine(new SecurityCostBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (quick) {
      rows = 20_000;
      rounds = 1;
      seconds = 3;
      warmUpSeconds = 2;
      warmUpMaxSeconds = 30;
      settleIdleSeconds = 4;
    }
    if (out == null) {
      out = Path.of(quick ? "bench/results/security-quick.md" : "bench/results/security.md");
    }
    if (rows < 1 || valueBytes < 1 || rounds < 1 || seconds < 1 || warmUpSeconds < 0 || warmUpMaxSeconds < 0
        || writeBatch < 1 || readBatch < 1 || readBatch > rows || scanChunk < 1 || concurrency < 1
        || scanConcurrency < 1 || inFlight < 1 || settleIdleSeconds < 0 || settleMaxSeconds < 0
        || !(pacedShare >= 0 && pacedShare <= 1)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "sizes, counts and windows must be positive "
          + "(warm-ups and settles may be 0), --read-batch at most --rows, --paced-share in [0, 1]");
    }
    EndToEndBench.startWatchdog("security", Duration.ofMinutes(timeoutMinutes));
    String loadBefore = ResultsFile.loadAverage();
    long started = System.nanoTime();
    Dataset data = new Dataset(rows, valueBytes, seed);
    if (nodeJfr != null) {
      Files.createDirectories(nodeJfr);
    }
    double warmedUp;
    double[] ready = new double[2];
    try (NodeSecurityFiles files = NodeSecurityFiles.create();
         Target plain = Target.start(false, files, data, jvmOptions(false), config());
         Target secure = Target.start(true, files, data, jvmOptions(true), config())) {
      ready[0] = plain.readySeconds;
      ready[1] = secure.readySeconds;
      for (Target t : List.of(plain, secure)) {
        System.err.printf(Locale.ROOT, "%s node pid %d ready after %.1f s%n", t.name(), t.node.pid(), t.readySeconds);
        load(t, data);
      }
      warmedUp = warmUp(plain, secure, data);
      for (int round = 0; round < rounds; round++) {
        for (SecurityWorkload w : workloads) {
          // Which node goes first alternates by workload and by round.
          boolean plainFirst = (round + w.ordinal()) % 2 == 0;
          List<Target> order = plainFirst ? List.of(plain, secure) : List.of(secure, plain);
          double[] rates = new double[2];
          for (int i = 0; i < 2; i++) {
            rates[i] = timed(order.get(i), w, round, 0, data).result().valuesPerSecond();
          }
          if (pacedShare > 0) {
            double pace = pacedShare * Math.min(rates[0], rates[1]);
            for (Target t : order) {
              timed(t, w, round, pace, data);
            }
          }
          for (Target t : order) {
            if (!t.node.isAlive()) {
              throw new IllegalStateException("the " + t.name() + " node died:\n" + t.node.tail());
            }
          }
        }
      }
    }
    List<JfrDigest.Digest> recorded = new ArrayList<>(recorded(recording(false), plainRecorded));
    recorded.addAll(recorded(recording(true), secureRecorded));
    SecurityReport report = new SecurityReport(ResultsFile.command(SecurityCostBench.class, spec), settings(),
        workloads, rounds, windows, ready, warmedUp, loadBefore, ResultsFile.loadAverage(),
        Duration.ofNanos(System.nanoTime() - started), recorded);
    String markdown = report.markdown();
    System.out.print(markdown);
    ResultsFile.write(out, markdown);
    System.err.println("wrote " + out);
    return 0;
  }

  /** Creates the table on {@code t}'s node and writes every row into it in key order, untimed. */
  private void load(Target t, Dataset data) throws Exception {
    t.batched.createTable(TABLE);
    long start = System.nanoTime();
    int[] inKeyOrder = data.keyOrder();
    long batches = (rows + writeBatch - 1) / writeBatch;
    InFlight.run(concurrency, batches, Long.MAX_VALUE, k -> t.batched.write(TABLE, inKeyOrder, (int) k * writeBatch,
        Math.min(rows, (int) (k + 1) * writeBatch)));
    double loaded = (System.nanoTime() - start) / 1e9;
    double idle = settle(t).seconds();
    System.err.printf(Locale.ROOT, "loaded %,d rows into the %s node in %.1f s, idle %.0f s later%n", rows, t.name(),
        loaded, idle);
  }

  /**
   * Untimed cycles of every workload on both nodes, until a cycle in which the JIT compilers of
   * both nodes and of this process each used under {@link #JIT_QUIET_SHARE} of a core, or for
   * at most {@code --warm-up-max-seconds}; then both nodes settle. Returns how long it took.
   */
  private double warmUp(Target plain, Target secure, Dataset data) throws Exception {
    long start = System.nanoTime();
    long client = ProcessHandle.current().pid();
    int cycle = 0;
    while (warmUpSeconds > 0 && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(warmUpMaxSeconds)) {
      long cycleStart = System.nanoTime();
      long[] before = {jit(plain.node.pid()), jit(secure.node.pid()), jit(client)};
      for (SecurityWorkload w : workloads) {
        for (Target t : List.of(plain, secure)) {
          window(t, w, -1 - cycle, warmUpSeconds, 0, data);
        }
      }
      double cycleSeconds = (System.nanoTime() - cycleStart) / 1e9;
      long[] after = {jit(plain.node.pid()), jit(secure.node.pid()), jit(client)};
      double[] share = new double[3];
      for (int i = 0; i < 3; i++) {
        share[i] = (after[i] - before[i]) / 1e9 / cycleSeconds;
      }
      cycle++;
      System.err.printf(Locale.ROOT, "warm-up cycle %d: JIT compilers used %.0f%% (plain node), %.0f%% (secured "
          + "node), %.0f%% (client) of a core%n", cycle, 100 * share[0], 100 * share[1], 100 * share[2]);
      if (share[0] < JIT_QUIET_SHARE && share[1] < JIT_QUIET_SHARE && share[2] < JIT_QUIET_SHARE) {
        break;
      }
    }
    for (Target t : List.of(plain, secure)) {
      settle(t);
    }
    return (System.nanoTime() - start) / 1e9;
  }

  private static long jit(long pid) {
    return JitActivity.compilerNanos(pid).orElse(0);
  }

  /**
   * A timed window of {@code w} on {@code t}, at full speed ({@code pace} 0) or paced at
   * {@code pace} values per second; after a write window, waits until the node idles.
   */
  private SecurityReport.Window timed(Target t, SecurityWorkload w, int round, double pace, Dataset data)
      throws Exception {
    Instant began = Instant.now();
    Timed timed = window(t, w, round, seconds, pace, data);
    (t.secure ? secureRecorded : plainRecorded).add(new JfrDigest.Window("round " + (round + 1) + ", " + w.label()
        + (pace > 0 ? ", paced" : "") + ", " + t.name(), began, Instant.now()));
    Settled after = w.isWrite() ? settle(t) : Settled.NONE;
    SecurityReport.Window m = new SecurityReport.Window(round, w, t.secure, pace, timed.result, timed.cpu,
        timed.jitNanos, after.nodeNanos);
    windows.add(m);
    System.err.printf(Locale.ROOT, "%s round %d, %s%s, %s node: %,.0f values/s; node CPU %.1f us/value (JIT %.0f "
        + "ms; %.1f us/value after, idle after %.0f s), client %.1f us/value%n", began, round + 1, w.label(),
        pace > 0 ? String.format(Locale.ROOT, " paced at %,.0f/s", pace) : "", t.name(), m.result().valuesPerSecond(),
        m.nodeMicrosPerValue(), timed.jitNanos / 1e6, m.afterMicrosPerValue(), after.seconds, m.clientMicrosPerValue());
    return m;
  }

  /** A window's measure: what {@link InFlight} saw, the CPU both processes used, the node's JIT compilers' CPU. */
  private record Timed(InFlight.Result result, CpuUse cpu, long jitNanos) {}

  /** The CPU a node used after a write window until it idled, and how long that took. */
  private record Settled(long nodeNanos, double seconds) {
    static final Settled NONE = new Settled(0, 0);
  }

  /**
   * One window of {@code w} on {@code t}, as fast as it goes ({@code pace} 0) or paced at
   * {@code pace} values per second: the same requests on both nodes in a round.
   */
  private Timed window(Target t, SecurityWorkload w, int round, int windowSeconds, double pace, Dataset data)
      throws Exception {
    long salt = 0x5EEDL + 31L * round + w.ordinal();
    LongFunction<CompletionStage<Integer>> request;
    int slots = concurrency;
    int perRequest = switch (w) {
      case BATCHED_WRITE -> writeBatch;
      case BATCHED_READ -> readBatch;
      case SCAN -> Math.min(rows, scanChunk);
      case SINGLE_WRITE, SINGLE_READ -> 1;
    };
    switch (w) {
      case BATCHED_WRITE -> {
        int[] order = data.permutation(salt);
        long perPass = (rows + writeBatch - 1) / writeBatch;
        request = k -> {
          int from = (int) (k % perPass) * writeBatch;
          return t.batched.write(TABLE, order, from, Math.min(rows, from + writeBatch));
        };
      }
      case SINGLE_WRITE -> {
        int[] order = data.permutation(salt);
        slots = inFlight;
        request = k -> t.single.mutateRow(TABLE, order[(int) (k % rows)]);
      }
      case BATCHED_READ -> {
        SplittableRandom random = new SplittableRandom(seed ^ salt);
        request = k -> {
          int[] keys = EndToEndBench.distinct(random, rows, readBatch);
          Arrays.sort(keys);
          return t.batched.read(TABLE, keys, 0, keys.length);
        };
      }
      case SCAN -> {
        long chunks = (rows + scanChunk - 1) / scanChunk;
        slots = scanConcurrency;
        request = k -> {
          int from = (int) (k % chunks) * scanChunk;
          return t.batched.scan(TABLE, from, Math.min(rows, from + scanChunk));
        };
      }
      case SINGLE_READ -> {
        SplittableRandom random = new SplittableRandom(seed ^ salt);
        slots = inFlight;
        request = k -> t.single.readRow(TABLE, random.nextInt(rows));
      }
      default -> throw new IllegalStateException("unknown workload " + w);
    }
    long jitBefore = JitActivity.compilerNanos(t.node.pid()).orElse(0);
    CpuUse before = CpuUse.now(t.node.pid());
    InFlight.Result r = InFlight.run(slots, Long.MAX_VALUE,
        System.nanoTime() + TimeUnit.SECONDS.toNanos(windowSeconds), pace / perRequest, request);
    CpuUse used = CpuUse.now(t.node.pid()).minus(before);
    long jit = JitActivity.compilerNanos(t.node.pid()).orElse(0) - jitBefore;
    return new Timed(r, used, jit);
  }

  /** Waits until {@code t}'s node idles after writes (flushes and compactions done). */
  private Settled settle(Target t) throws InterruptedException {
    if (settleIdleSeconds == 0 || settleMaxSeconds == 0) {
      return Settled.NONE;
    }
    CpuUse before = CpuUse.now(t.node.pid());
    double s = CpuUse.awaitIdle(t.node.pid(), System.nanoTime(), IDLE_SHARE, settleIdleSeconds,
        Duration.ofSeconds(settleMaxSeconds));
    return new Settled(CpuUse.now(t.node.pid()).minus(before).nodeNanos(), s);
  }

  private List<String> jvmOptions(boolean secure) {
    List<String> jvm = new ArrayList<>(nodeJavaOpts.isBlank() ? List.of()
        : List.of(nodeJavaOpts.trim().split("\\s+")));
    if (nodeJfr != null) {
      jvm.add(JfrDigest.recorderOption(recording(secure)));
    }
    return jvm;
  }

  private Path recording(boolean secure) {
    return nodeJfr == null ? null : nodeJfr.resolve(secure ? "secured.jfr" : "plain.jfr");
  }

  /**
   * The digest of a node's recording, written when the node stopped; none (and why, on stderr)
   * if there is none or it is incomplete, so that the rest of the report is kept.
   */
  private static List<JfrDigest.Digest> recorded(Path recording, List<JfrDigest.Window> windows) {
    if (recording == null) {
      return List.of();
    }
    try {
      return JfrDigest.digest(recording, windows);
    } catch (IOException e) {
      System.err.println("no digest of the node's recording " + recording + ": " + e);
      return List.of();
    }
  }

  private String config() {
    return "# Written by the security benchmark.\n" + nodeConfig + "\n";
  }

  private String settings() {
    String scans = workloads.contains(SecurityWorkload.SCAN) ? String.format(Locale.ROOT, " scans of %,d-row key "
        + "ranges (one streamed ReadRows each), %d in flight;", scanChunk, scanConcurrency) : "";
    String paced = pacedShare == 0 ? "" : String.format(Locale.ROOT, "; the paced ones at %.0f%% of the slower node's "
        + "full-speed rate in the round", 100 * pacedShare);
    return String.format(Locale.ROOT, "%,d rows of %,d-byte values per node, loaded untimed first. Batched writes of "
        + "%d rows (`bulkMutateRowsAsync`, one MutateRows) and batched reads of %d row keys (a multi-key `Query`, one "
        + "ReadRows), %d in flight;%s single-row `mutateRowAsync` and `readRowAsync`, %d in flight from one thread. "
        + "Warm-up: cycles of %d s windows of every workload on both nodes until the JIT compilers fall quiet (at most "
        + "%d s). Timed windows of %d s%s. After each write window the bench waits, untimed, until the node idles "
        + "(under a tenth of a core for %d s, at most %d s). Node JVM options: `%s`; node settings: %s.", rows,
        valueBytes, writeBatch, readBatch, concurrency, scans, inFlight, warmUpSeconds, warmUpMaxSeconds, seconds,
        paced, settleIdleSeconds, settleMaxSeconds, nodeJavaOpts, nodeConfig.isBlank()
            ? "the defaults (the node's own warm-up included)" : "`" + nodeConfig.replace('\n', ' ') + "`");
  }

  /** One node of a round and the official clients that drive it; closing stops both. */
  private static final class Target implements AutoCloseable {
    final boolean secure;
    final NodeProcess node;
    final double readySeconds;
    final OfficialClientUnderTest batched;
    final OfficialPlainClient single;

    private Target(boolean secure, NodeProcess node, double readySeconds, OfficialClientUnderTest batched,
        OfficialPlainClient single) {
      this.secure = secure;
      this.node = node;
      this.readySeconds = readySeconds;
      this.batched = batched;
      this.single = single;
    }

    /** Starts a node, waits for its {@code /ready}, and connects both clients. */
    static Target start(boolean secure, NodeSecurityFiles files, Dataset data, List<String> jvm, String config)
        throws IOException, InterruptedException {
      long t0 = System.nanoTime();
      NodeProcess node = NodeProcess.start(config, jvm, secure ? Optional.of(files) : Optional.empty(),
          Duration.ofSeconds(180));
      OfficialClientUnderTest batched = null;
      try {
        node.awaitReady(Duration.ofSeconds(60));
        double ready = (System.nanoTime() - t0) / 1e9;
        OfficialEndpoint endpoint = secure ? OfficialEndpoint.secure(node.port(), files)
            : OfficialEndpoint.plaintext(node.port());
        batched = new OfficialClientUnderTest(endpoint, data, true, 0, 1);
        return new Target(secure, node, ready, batched, new OfficialPlainClient(endpoint, data));
      } catch (IOException | InterruptedException | RuntimeException e) {
        if (batched != null) {
          batched.close();
        }
        node.close();
        throw e;
      }
    }

    String name() {
      return secure ? "secured" : "plain";
    }

    @Override
    public void close() throws IOException {
      try {
        single.close();
        batched.close();
      } finally {
        node.close();
      }
    }
  }
}
