package io.tabula.bench.e2e;

import com.google.cloud.bigtable.emulator.core.EmulatorController;
import io.tabula.bench.Dataset;
import io.tabula.bench.JfrDigest;
import io.tabula.bench.ResultsFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Everyday single-row calls, made the plain way: the official Java client against one
 * {@code tabula server} node with its default settings and against Google's bundled emulator,
 * taking turns; then the Tabula client against the same node. Every set writes fresh tables
 * with unary calls and with the library's batched load, reads rows one call each, scans the
 * whole table, and makes lone calls one at a time. The node's first set is its first work:
 * how fast a fresh node is. A benchmark, never a test.
 */
@Command(name = "plain-calls", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Single-row calls of the official client (Tabula vs the emulator) and of the Tabula client.")
public final class PlainCallsBench implements Callable<Integer> {
  /** The share of one core under which the server counts as idle after a write run. */
  private static final double IDLE_SHARE = 0.10;
  /**
   * How long the server must idle after a write run: longer than a node's tablets wait before
   * the compaction of a quiet spell (two checks of 2 s without writes, QuietCompaction), which
   * would otherwise start after a shorter wait and run under the next workload.
   */
  private static final int IDLE_SECONDS = 8;

  @Option(names = "--rows", description = "Rows each write workload writes and each read workload reads "
      + "(1000-byte values); default: ${DEFAULT-VALUE}", defaultValue = "100000")
  private int rows;

  @Option(names = "--value-bytes", description = "Bytes of every value; default: ${DEFAULT-VALUE}",
      defaultValue = "1000")
  private int valueBytes;

  @Option(names = "--in-flight", description = "Single-row calls in flight, from one thread; default: ${DEFAULT-VALUE}",
      defaultValue = "64")
  private int inFlight;

  @Option(names = "--batch", description = "Rows per batch of the Tabula client's load; default: ${DEFAULT-VALUE}",
      defaultValue = "100")
  private int batch;

  @Option(names = "--batch-in-flight", description = "Batches in flight in the Tabula client's load; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "200")
  private int batchInFlight;

  @Option(names = "--lone-calls", description = "Calls of each lone workload, one at a time; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "2000")
  private int loneCalls;

  @Option(names = "--tabula-rounds", description = "Sets of the official client against the node; the first "
      + "is the fresh node's; default: ${DEFAULT-VALUE}", defaultValue = "3")
  private int tabulaRounds;

  @Option(names = "--emulator-rounds", description = "Sets against the emulator; default: ${DEFAULT-VALUE}",
      defaultValue = "2")
  private int emulatorRounds;

  @Option(names = "--tabula-client-rounds", description = "Sets of the Tabula client against the node, after "
      + "the official client's; default: ${DEFAULT-VALUE}", defaultValue = "2")
  private int tabulaClientRounds;

  @Option(names = "--workloads", split = ",", description = "Some of: ${COMPLETION-CANDIDATES}; default: all")
  private List<PlainWorkload> workloads = List.of(PlainWorkload.values());

  @Option(names = "--node-java-opts", description = "JVM options of the node process; default: none, as "
      + "`bin/tabula server` starts it")
  private String nodeJavaOpts = "";

  @Option(names = "--node-config", description = "HOCON added to the node's settings (default: none, the "
      + "node's defaults)")
  private String nodeConfig = "";

  @Option(names = "--settle-max-seconds", description = "After each write workload, wait until the server "
      + "process idles (under a tenth of a core for 8 s), for at most this long; 0 not to wait; default: "
      + "${DEFAULT-VALUE}", defaultValue = "90")
  private int settleMaxSeconds;

  @Option(names = "--seed", description = "Seed of values and key orders; default: ${DEFAULT-VALUE}",
      defaultValue = "42")
  private long seed;

  @Option(names = "--quick", description = "20,000 rows, 500 lone calls, 2 node rounds, 1 emulator round, "
      + "1 Tabula client round (overrides those options).")
  private boolean quick;

  @Option(names = "--timeout-minutes", description = "Stop everything after this long; default: ${DEFAULT-VALUE}",
      defaultValue = "45")
  private int timeoutMinutes;

  @Option(names = "--node-jfr", description = "Record the node with the flight recorder into this file, and add "
      + "where its time went in each of its sets to the report")
  private Path nodeJfr;

  @Option(names = "--out", description = "Markdown result file; default: bench/results/plain-calls.md, "
      + "or plain-calls-quick.md with --quick")
  private Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  /** When each of the node's workloads ran, for its flight recording. */
  private final List<JfrDigest.Window> windows = new ArrayList<>();

  public static void main(String[] args) {
    System.exit(new CommandLine(new PlainCallsBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (quick) {
      rows = 20_000;
      loneCalls = 500;
      tabulaRounds = 2;
      emulatorRounds = 1;
      tabulaClientRounds = 1;
    }
    if (out == null) {
      out = Path.of(quick ? "bench/results/plain-calls-quick.md" : "bench/results/plain-calls.md");
    }
    if (rows < 1 || valueBytes < 1 || inFlight < 1 || batch < 1 || batchInFlight < 1 || loneCalls < 1
        || tabulaRounds < 0 || emulatorRounds < 0 || tabulaClientRounds < 0) {
      throw new CommandLine.ParameterException(spec.commandLine(), "sizes and counts must be positive, rounds "
          + "not negative");
    }
    String loadBefore = ResultsFile.loadAverage();
    EndToEndBench.startWatchdog("plain-calls", Duration.ofMinutes(timeoutMinutes));
    Dataset data = new Dataset(rows + loneCalls, valueBytes, seed);
    List<PlainReport.Run> runs = new ArrayList<>();
    double[] fsyncBefore = fsyncMillis(1000);
    System.err.printf(Locale.ROOT, "fsync of a 1 KiB append: p50 %.3f ms, p99 %.3f ms%n", fsyncBefore[0],
        fsyncBefore[1]);
    List<String> jvm = new ArrayList<>(nodeJavaOpts.isBlank() ? List.of()
        : List.of(nodeJavaOpts.trim().split("\\s+")));
    if (nodeJfr != null) {
      Files.deleteIfExists(nodeJfr); // a recording left from an earlier run must not be read as this one's
      jvm.add(JfrDigest.recorderOption(nodeJfr));
    }
    PlainReport report;
    long t0 = System.nanoTime();
    try (NodeProcess node = NodeProcess.start("# Written by the plain-calls benchmark.\n" + nodeConfig + "\n", jvm,
        Duration.ofSeconds(120))) {
      double readySeconds = (System.nanoTime() - t0) / 1e9;
      System.err.printf(Locale.ROOT, "node pid %d serving on %s after %.1f s%n", node.pid(), node.endpoint(),
          readySeconds);
      EmulatorController emulator = EmulatorController.createBundled();
      if (emulatorRounds > 0) {
        emulator.start();
      }
      try {
        long emulatorPid = emulatorRounds > 0 ? emulatorPid(node.pid()) : -1;
        try (OfficialPlainClient toNode = new OfficialPlainClient(OfficialEndpoint.emulator(node.port()), data);
             OfficialPlainClient toEmulator = emulatorRounds > 0
                 ? new OfficialPlainClient(OfficialEndpoint.emulator(emulator.getPort()), data)
                 : null) {
          // The emulator goes first in the first round, so the client JVM is warm when the fresh node's set runs.
          int rounds = Math.max(tabulaRounds, emulatorRounds);
          for (int r = 0; r < rounds; r++) {
            boolean emulatorFirst = r % 2 == 0;
            for (int turn = 0; turn < 2; turn++) {
              boolean onEmulator = emulatorFirst == (turn == 0);
              if (onEmulator && r < emulatorRounds) {
                runs.add(set("emulator", toEmulator, emulatorPid, r, data));
              } else if (!onEmulator && r < tabulaRounds) {
                runs.add(set("Tabula", toNode, node.pid(), r, data));
                if (!node.isAlive()) {
                  throw new IllegalStateException("the node died:\n" + node.tail());
                }
              }
            }
          }
        }
        if (tabulaClientRounds > 0) {
          try (TabulaPlainClient tabula = new TabulaPlainClient(node.endpoint(), data, batch)) {
            for (int r = 0; r < tabulaClientRounds; r++) {
              runs.add(set("Tabula", tabula, node.pid(), r, data));
            }
          }
        }
      } finally {
        if (emulatorRounds > 0) {
          emulator.stop();
        }
      }
      double[] fsyncAfter = fsyncMillis(1000);
      report = new PlainReport(ResultsFile.command(PlainCallsBench.class, spec),
          settings(nodeJfr == null ? jvm : jvm.subList(0, jvm.size() - 1)),
          readySeconds, fsyncBefore, fsyncAfter, runs, loadBefore, ResultsFile.loadAverage());
    }
    String markdown = report.markdown(recorded());
    System.out.print(markdown);
    ResultsFile.write(out, markdown);
    System.err.println("wrote " + out);
    return 0;
  }

  private String settings(List<String> jvm) {
    return String.format(Locale.ROOT, "%,d rows of %,d-byte values per workload; %d single-row calls in flight "
        + "from one thread; lone workloads %,d calls one at a time; the official client's loads use "
        + "`newBulkMutationBatcher` with its defaults, the Tabula client's send batches of %d rows with %d in "
        + "flight. Node JVM options: %s; node settings: %s.", rows, valueBytes, inFlight, loneCalls, batch,
        batchInFlight, jvm.isEmpty() ? "none (as `bin/tabula server`)" : "`" + String.join(" ", jvm) + "`",
        nodeConfig.isBlank() ? "the defaults" : "`" + nodeConfig.replace('\n', ' ') + "`")
        + (nodeJfr == null ? "" : " The node ran under the flight recorder (`--node-jfr`).");
  }

  /** One set of every selected workload, on fresh tables of its own. */
  private PlainReport.Run set(String target, PlainClient c, long serverPid, int round, Dataset data) throws Exception {
    String prefix = "plain_" + (c instanceof TabulaPlainClient ? "tc" : "oc") + round + "_";
    String seqTable = prefix + "seq";
    String seqLoadTable = prefix + "seqload";
    String randomTable = prefix + "random";
    String randomLoadTable = prefix + "randomload";
    String loneTable = prefix + "lone";
    for (String t : List.of(seqTable, seqLoadTable, randomTable, randomLoadTable, loneTable)) {
      c.createTable(t);
    }
    int[] inOrder = Arrays.copyOf(data.keyOrder(), rows);
    int[] shuffled = Arrays.stream(data.permutation(0x5EEDL + round)).filter(i -> i < rows).toArray();
    List<PlainReport.Measure> measures = new ArrayList<>();
    for (PlainWorkload w : PlainWorkload.values()) {
      if (!workloads.contains(w)) {
        continue;
      }
      CpuUse before = CpuUse.now(serverPid);
      Instant began = Instant.now();
      InFlight.Result r = switch (w) {
        case SEQ_UNARY_WRITE -> unary(k -> c.mutateRow(seqTable, inOrder[(int) k]), rows);
        case SEQ_LOAD -> c.load(seqLoadTable, inOrder, batch, batchInFlight);
        case RANDOM_UNARY_WRITE -> unary(k -> c.mutateRow(randomTable, shuffled[(int) k]), rows);
        case RANDOM_LOAD -> c.load(randomLoadTable, shuffled, batch, batchInFlight);
        case RANDOM_UNARY_READ -> {
          String table = readable(randomLoadTable, seqLoadTable, seqTable, randomTable);
          SplittableRandom random = new SplittableRandom(seed + round);
          yield unary(k -> c.readRow(table, random.nextInt(rows)), rows);
        }
        case SEQ_UNARY_READ -> {
          String table = readable(randomTable, seqTable, seqLoadTable, randomLoadTable);
          yield unary(k -> c.readRow(table, (int) k), rows);
        }
        case SCAN -> {
          String table = readable(seqLoadTable, seqTable, randomLoadTable, randomTable);
          long start = System.nanoTime();
          c.scan(table, rows);
          long nanos = System.nanoTime() - start;
          yield new InFlight.Result(rows, nanos, new long[] {nanos});
        }
        case LONE_WRITE -> InFlight.run(1, loneCalls, Long.MAX_VALUE, k -> c.mutateRow(loneTable, rows + (int) k));
        case LONE_READ -> {
          String table = readable(randomLoadTable, seqLoadTable, seqTable, randomTable);
          SplittableRandom random = new SplittableRandom(~seed - round);
          yield InFlight.run(1, loneCalls, Long.MAX_VALUE, k -> c.readRow(table, random.nextInt(rows)));
        }
      };
      CpuUse after = CpuUse.now(serverPid);
      if (target.equals("Tabula")) {
        windows.add(new JfrDigest.Window(c.name() + ", set " + (round + 1) + ", " + w.label(), began,
            Instant.now()));
      }
      // The flushes and compactions a write run leaves behind: waited for, so the next run is
      // not measured against them, and reported as CPU per value written.
      double settle = 0;
      double leftMicros = 0;
      if (w.isWrite() && settleMaxSeconds > 0) {
        settle = CpuUse.awaitIdle(serverPid, System.nanoTime(), IDLE_SHARE, IDLE_SECONDS,
            Duration.ofSeconds(settleMaxSeconds));
        leftMicros = CpuUse.now(serverPid).minus(after).nodeNanos() / 1e3 / r.values();
      } else {
        TimeUnit.SECONDS.sleep(1);
      }
      PlainReport.Measure m = new PlainReport.Measure(w, c.api(w), r, after.minus(before), leftMicros);
      measures.add(m);
      System.err.printf(Locale.ROOT, "%s %s, %s, round %d, %s: %,.0f values/s, p50 %.3f ms, p99 %.3f ms; CPU "
          + "us/value server %.1f (%.1f more after, idle after %.0f s), client %.1f%n", Instant.now(), target,
          c.name(), round + 1, w.label(), r.valuesPerSecond(), r.latencyMs(0.5), r.latencyMs(0.99),
          m.serverMicrosPerValue(), leftMicros, settle, m.clientMicrosPerValue());
    }
    return new PlainReport.Run(target, c.name(), round, measures);
  }

  /**
   * The digest of the node's recording, written when the node stopped; none (and why, on
   * stderr) if there is no complete recording, so that the rest of the report is kept.
   */
  private List<JfrDigest.Digest> recorded() {
    if (nodeJfr == null) {
      return List.of();
    }
    try {
      return JfrDigest.digest(nodeJfr, windows);
    } catch (IOException e) {
      System.err.println("no digest of the node's recording " + nodeJfr + " (the node may have been killed before "
          + "it wrote it): " + e);
      return List.of();
    }
  }

  /** The first of the tables that a selected write workload filled. */
  private String readable(String... candidates) {
    PlainWorkload[] fills = {PlainWorkload.RANDOM_LOAD, PlainWorkload.SEQ_LOAD, PlainWorkload.SEQ_UNARY_WRITE,
        PlainWorkload.RANDOM_UNARY_WRITE};
    String[] tables = {"randomload", "seqload", "seq", "random"};
    for (String candidate : candidates) {
      for (int i = 0; i < fills.length; i++) {
        if (candidate.endsWith("_" + tables[i]) && workloads.contains(fills[i])) {
          return candidate;
        }
      }
    }
    throw new CommandLine.ParameterException(spec.commandLine(), "a read workload needs a write workload to fill "
        + "its table first");
  }

  private InFlight.Result unary(java.util.function.LongFunction<java.util.concurrent.CompletionStage<Integer>> call,
      int calls) throws Exception {
    return InFlight.run(inFlight, calls, Long.MAX_VALUE, call);
  }

  /** The emulator's process: the child of this JVM that is not the node. */
  private static long emulatorPid(long nodePid) {
    return ProcessHandle.current().children().filter(h -> h.pid() != nodePid && h.isAlive())
        .mapToLong(ProcessHandle::pid).max()
        .orElseThrow(() -> new IllegalStateException("the emulator's process is not a child of this JVM"));
  }

  /**
   * The p50 and p99 in milliseconds of appending 1 KiB to a file and forcing it to disk, in
   * the temporary folder the node's data is in: what one durable write cannot beat.
   */
  static double[] fsyncMillis(int n) throws IOException {
    Path dir = Files.createTempDirectory("tabula-fsync-");
    Path file = dir.resolve("probe");
    long[] nanos = new long[n];
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND)) {
      ByteBuffer b = ByteBuffer.allocate(1024);
      for (int i = 0; i < n; i++) {
        b.clear();
        long t = System.nanoTime();
        ch.write(b);
        ch.force(false);
        nanos[i] = System.nanoTime() - t;
      }
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
    Arrays.sort(nanos);
    return new double[] {nanos[n / 2] / 1e6, nanos[(int) Math.ceil(0.99 * n) - 1] / 1e6};
  }
}
