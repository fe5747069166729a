package io.tabula.bench.e2e;

import io.tabula.bench.Dataset;
import io.tabula.bench.ResultsFile;
import io.tabula.client.GcPolicy;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongFunction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * What distribution costs (§7 Figure 6's random writes and random reads, batched as in
 * {@link EndToEndBench}): the same workloads against one node and against a three-node
 * cluster on this machine, side by side in one run, each node its own JVM on 127.0.0.1, the
 * table pre-split so its tablets spread over the nodes. With two cores throughput cannot grow
 * with nodes here; the report gives values per second and the CPU time per value summed over
 * every node process and the client. On the three nodes it then moves tablets while random
 * writes run and reports each move's unavailability: the longest wait of single-row writes to
 * the moving tablet. A benchmark, never a test.
 */
@Command(name = "run-cluster", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Random writes and reads against 1 node and 3 nodes, CPU per value; move unavailability.")
public final class ClusterBench implements Callable<Integer> {
  @Option(names = "--quick", description = "40,000 rows, 10 s write and 5 s read windows, 8 s warm-ups, 10 moves.")
  private boolean quick;

  @Option(names = "--rows", defaultValue = "150000", description = "Rows per client; default: ${DEFAULT-VALUE}")
  private int rows;

  @Option(names = "--value-bytes", defaultValue = "1000", description = "Value size; default: ${DEFAULT-VALUE}")
  private int valueBytes;

  @Option(names = "--tablets", defaultValue = "12", description = "Tablets the table is split into at creation; "
      + "default: ${DEFAULT-VALUE}")
  private int tablets;

  @Option(names = "--clients", split = ",", description = "tabula, official; default: both")
  private List<String> clientNames = List.of("tabula", "official");

  @Option(names = "--concurrency", defaultValue = "32", description = "Requests in flight; default: ${DEFAULT-VALUE}")
  private int concurrency;

  @Option(names = "--write-batch", defaultValue = "200", description = "Rows per write; default: ${DEFAULT-VALUE}")
  private int writeBatch;

  @Option(names = "--read-batch", defaultValue = "25", description = "Rows per read; default: ${DEFAULT-VALUE}")
  private int readBatch;

  @Option(names = "--write-seconds", defaultValue = "20", description = "Timed write window; default: ${DEFAULT-VALUE}")
  private int writeSeconds;

  @Option(names = "--read-seconds", defaultValue = "10", description = "Timed read window; default: ${DEFAULT-VALUE}")
  private int readSeconds;

  @Option(names = "--warmup-seconds", defaultValue = "120", description = "Longest unmeasured load before each "
      + "timed write and read window: cycles of the same load run until the JIT compilers of every node JVM and "
      + "of this one used less than " + JIT_QUIET_PERCENT + "% of a core in a cycle, as bench/run-e2e does (a fresh "
      + "cluster of three compiles the same code three times, on the same two cores); default: ${DEFAULT-VALUE}")
  private int warmupSeconds;

  @Option(names = "--moves", defaultValue = "20", description = "Moves under write load on 3 nodes; "
      + "default: ${DEFAULT-VALUE}")
  private int moves;

  @Option(names = "--node-java-opts", defaultValue = "-Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch",
      description = "Each node JVM's options ({node} is replaced by the node's name, e.g. for a flight "
          + "recording's file name). The heap's pages are touched at start, as a long-running server's have long "
          + "been: otherwise three fresh heaps zero their pages during the timed windows (a few percent of the "
          + "nodes' CPU, seen with perf) and one heap does it once; default: ${DEFAULT-VALUE}")
  private String nodeJavaOpts;

  @Option(names = "--nodes", split = ",", defaultValue = "1,3",
      description = "Cluster sizes to run, in order; default: ${DEFAULT-VALUE}")
  private List<Integer> sizes;

  @Option(names = "--out", defaultValue = "bench/results/run-cluster.md",
      description = "Report file; default: ${DEFAULT-VALUE}")
  private Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  /** A warm-up ends once the JIT compilers used less than this share of one core, in percent, in a cycle. */
  private static final int JIT_QUIET_PERCENT = 5;
  private static final int WARM_UP_CYCLE_SECONDS = 5;
  /** How long each warm-up took, for the report. */
  private final List<String> warmUps = new ArrayList<>();

  public static void main(String[] args) {
    System.exit(new CommandLine(new ClusterBench()).execute(args));
  }

  /** One run's figures: values per second and CPU microseconds per value (nodes + client). */
  private record Figures(String workload, String client, int nodes, double valuesPerSecond, double nodeMicros,
      double clientMicros, double jitMicros) {
    double totalMicros() {
      return nodeMicros + clientMicros;
    }

    /** The CPU per value the nodes' JIT compilers did not use. */
    double withoutJitMicros() {
      return totalMicros() - jitMicros;
    }
  }

  @Override
  public Integer call() throws Exception {
    if (quick) {
      // Options given on the command line win over --quick's figures.
      var given = spec.commandLine().getParseResult();
      rows = given.hasMatchedOption("--rows") ? rows : 40_000;
      writeSeconds = given.hasMatchedOption("--write-seconds") ? writeSeconds : 10;
      readSeconds = given.hasMatchedOption("--read-seconds") ? readSeconds : 5;
      warmupSeconds = given.hasMatchedOption("--warmup-seconds") ? warmupSeconds : 60;
      moves = given.hasMatchedOption("--moves") ? moves : 10;
    }
    Dataset data = new Dataset(rows, valueBytes, 42);
    List<Figures> figures = new ArrayList<>();
    List<Long> unavailable = new ArrayList<>();
    for (int nodes : sizes) {
      try (BenchCluster cluster = BenchCluster.start(nodes, nodeJavaOpts)) {
        System.err.printf(Locale.ROOT, "%d node(s) serving%n", nodes);
        for (String name : clientNames) {
          String table = "bench_" + name;
          createTable(cluster, table, data);
          try (ClientUnderTest c = client(name, cluster, data)) {
            figures.add(write(cluster, c, table, data, nodes));
            figures.add(read(cluster, c, table, data, nodes));
          }
        }
        if (nodes > 1 && moves > 0) {
          unavailable.addAll(movesUnderLoad(cluster, data));
        }
      }
    }
    String report = report(figures, unavailable);
    System.out.println(report);
    ResultsFile.write(out, report);
    return 0;
  }

  private ClientUnderTest client(String name, BenchCluster cluster, Dataset data) throws IOException {
    return switch (name) {
      case "tabula" -> new TabulaClientUnderTest(cluster.endpoint(0), data, writeBatch);
      case "official" -> new OfficialClientUnderTest(OfficialEndpoint.emulator(cluster.nodes.get(0).grpc()), data, false,
          4 << 20, 2);
      default -> throw new CommandLine.ParameterException(spec.commandLine(), "unknown client " + name);
    };
  }

  /** The table, split into {@code tablets} equal key ranges of the dataset, spread over the nodes. */
  private void createTable(BenchCluster cluster, String table, Dataset data) throws Exception {
    List<byte[]> splits = new ArrayList<>();
    for (int i = 1; i < tablets; i++) {
      splits.add(data.key((int) ((long) rows * i / tablets)));
    }
    try (TabulaClient admin = TabulaClient.connect(cluster.endpoint(0))) {
      admin.admin().createTable(table, Map.of(ClientUnderTest.FAMILY, GcPolicy.maxVersions(1)), splits)
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    cluster.awaitReady();
  }

  /**
   * Random writes over the whole key space, over and over (each pass overwrites the last), for
   * the warm-up and then for the timed window: the window then sees the flushes and
   * compactions a steady write load causes, on one node as on three, not just the start of
   * one pass.
   */
  private Figures write(BenchCluster cluster, ClientUnderTest c, String table, Dataset data, int nodes) throws Exception {
    int[] order = data.permutation(0x5EEDL);
    long perPass = (order.length + writeBatch - 1) / writeBatch;
    LongFunction<CompletionStage<Integer>> request = k -> {
      int from = (int) (k % perPass * writeBatch);
      return c.write(table, order, from, Math.min(order.length, from + writeBatch));
    };
    warmUp(cluster, "random-write", c, request);
    BenchCluster.Cpu before = cluster.cpu();
    InFlight.Result r = InFlight.run(concurrency, Long.MAX_VALUE,
        System.nanoTime() + TimeUnit.SECONDS.toNanos(writeSeconds), request);
    Figures f = figures("random-write", c, nodes, r, cluster.cpu().minus(before));
    TimeUnit.SECONDS.sleep(8);
    return f;
  }

  private Figures read(BenchCluster cluster, ClientUnderTest c, String table, Dataset data, int nodes) throws Exception {
    SplittableRandom random = new SplittableRandom(7);
    LongFunction<CompletionStage<Integer>> request = k -> {
      java.util.TreeSet<Integer> distinct = new java.util.TreeSet<>();
      while (distinct.size() < Math.min(readBatch, rows)) {
        distinct.add(random.nextInt(rows));
      }
      int[] keys = distinct.stream().mapToInt(Integer::intValue).toArray();
      return c.read(table, keys, 0, keys.length);
    };
    warmUp(cluster, "random-read", c, request);
    BenchCluster.Cpu before = cluster.cpu();
    InFlight.Result r = InFlight.run(concurrency, Long.MAX_VALUE,
        System.nanoTime() + TimeUnit.SECONDS.toNanos(readSeconds), request);
    return figures("random-read", c, nodes, r, cluster.cpu().minus(before));
  }

  /**
   * Cycles of {@value #WARM_UP_CYCLE_SECONDS} s of {@code request}, unmeasured, until the JIT
   * compilers of the nodes and of this JVM used less than {@value #JIT_QUIET_PERCENT}% of a
   * core in a cycle, or for at most {@code warmupSeconds}; notes how long it took.
   */
  private void warmUp(BenchCluster cluster, String workload, ClientUnderTest c, LongFunction<CompletionStage<Integer>> request)
      throws Exception {
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(warmupSeconds);
    long self = ProcessHandle.current().pid();
    double share;
    do {
      long t0 = System.nanoTime();
      long jit0 = cluster.cpu().nodeJitNanos() + JitActivity.compilerNanos(self).orElse(0);
      InFlight.run(concurrency, Long.MAX_VALUE, Math.min(end, t0 + TimeUnit.SECONDS.toNanos(WARM_UP_CYCLE_SECONDS)),
          request);
      long jit = cluster.cpu().nodeJitNanos() + JitActivity.compilerNanos(self).orElse(0);
      share = (double) (jit - jit0) / (System.nanoTime() - t0);
    } while (share * 100 >= JIT_QUIET_PERCENT && System.nanoTime() < end);
    double seconds = (System.nanoTime() - start) / 1e9;
    warmUps.add(String.format(Locale.ROOT, "%s, %s, %d node(s): %.0f s (JIT %.0f%% of a core in the last cycle)",
        workload, c.name(), cluster.nodes.size(), seconds, share * 100));
    System.err.println("warmed up: " + warmUps.get(warmUps.size() - 1));
  }

  private static Figures figures(String workload, ClientUnderTest c, int nodes, InFlight.Result r,
      BenchCluster.Cpu used) {
    Figures f = new Figures(workload, c.name(), nodes, r.valuesPerSecond(), used.nodeNanos() / 1e3 / r.values(),
        used.clientNanos() / 1e3 / r.values(), used.nodeJitNanos() / 1e3 / r.values());
    System.err.printf(Locale.ROOT, "%s, %s, %d node(s): %.0f values/s, CPU %.1f us/value (nodes %.1f, client %.1f; "
        + "nodes' JIT compilers %.1f)%n", workload, c.name(), nodes, f.valuesPerSecond(), f.totalMicros(),
        f.nodeMicros(), f.clientMicros(), f.jitMicros());
    return f;
  }

  /**
   * Moves tablets of the Tabula client's table back and forth while batched random writes
   * run, and, for each move, a single-row writer keeps writing rows of the moving tablet;
   * the longest of its waits during the move is the move's unavailability.
   */
  private List<Long> movesUnderLoad(BenchCluster cluster, Dataset data) throws Exception {
    String table = "bench_moves";
    createTable(cluster, table, data);
    List<Long> out = new ArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    try (TabulaClient client = TabulaClient.connect(cluster.endpoint(0))) {
      Thread background = new Thread(() -> {
        SplittableRandom random = new SplittableRandom(11);
        while (!stop.get()) {
          List<RowMutation> batch = new ArrayList<>();
          for (int i = 0; i < writeBatch; i++) {
            int row = random.nextInt(rows);
            batch.add(RowMutation.create(data.key(row)).setCell(ClientUnderTest.FAMILY,
                com.google.protobuf.ByteString.copyFromUtf8("q"), 1000L, com.google.protobuf.ByteString.copyFrom(
                    data.value(row))));
          }
          client.applyBatch(table, batch).toCompletableFuture().join();
        }
      }, "background-writes");
      background.setDaemon(true);
      background.start();
      List<String[]> placement = cluster.tablets(table);
      for (int m = 0; m < moves; m++) {
        String[] t = placement.get(m % placement.size());
        String id = t[0];
        String owner = cluster.tablets(table).stream().filter(x -> x[0].equals(id)).findFirst().orElseThrow()[1];
        String to = cluster.names.get((cluster.names.indexOf(owner) + 1) % cluster.names.size());
        int probeRow = (int) ((long) rows * (m % placement.size()) / tablets);
        AtomicBoolean moving = new AtomicBoolean(true);
        long[] worst = {0};
        Thread probe = new Thread(() -> {
          while (moving.get()) {
            long t0 = System.nanoTime();
            client.apply(table, RowMutation.create(data.key(probeRow)).setCell(ClientUnderTest.FAMILY, "p", 1000L,
                "x"))
                .toCompletableFuture().join();
            worst[0] = Math.max(worst[0], System.nanoTime() - t0);
          }
        }, "probe");
        probe.start();
        cluster.post("/tabula/tablets/" + id + "/move?to=" + to);
        cluster.awaitServingAt(table, id, to);
        moving.set(false);
        probe.join();
        out.add(TimeUnit.NANOSECONDS.toMillis(worst[0]));
        System.err.printf(Locale.ROOT, "move %d of %s %s->%s: longest write wait %d ms%n", m + 1, id, owner, to,
            out.get(out.size() - 1));
        TimeUnit.MILLISECONDS.sleep(300);
      }
      stop.set(true);
      background.join(60_000);
    }
    return out;
  }

  private String report(List<Figures> figures, List<Long> unavailable) {
    StringBuilder sb = new StringBuilder("# Tabula: one node against three on one machine\n\n");
    sb.append(ResultsFile.machineLine());
    sb.append("Command: `").append(ResultsFile.command(ClusterBench.class, spec)).append("`\n\n");
    sb.append(String.format(Locale.ROOT, "%,d rows of %d-byte values per client, a table of %d tablets; "
        + "writes of %d rows (the key space in a random order, over and over) and reads of %d random rows per request, "
        + "%d in flight; writes timed over %d s and reads over %d s, each after up to %d s of the same load unmeasured, until the JIT compilers of every JVM were nearly idle (below). CPU is summed over every node process and the client; of it, the nodes' JIT "
        + "compiler threads (each JVM compiles the same code for itself while it warms up) are shown apart, and the "
        + "last column compares what is left.%n%n", rows, valueBytes, tablets,
        writeBatch, readBatch, concurrency, writeSeconds, readSeconds, warmupSeconds));
    sb.append("| workload | client | nodes | values/s | CPU us/value (nodes + client) | of it JIT | vs 1 node "
        + "| vs 1 node without JIT |\n");
    sb.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (Figures f : figures) {
      Figures one = figures.stream().filter(o -> o.nodes() == 1 && o.workload().equals(f.workload())
          && o.client().equals(f.client())).findFirst().orElse(f);
      sb.append(String.format(Locale.ROOT, "| %s | %s | %d | %,.0f | %.1f (%.1f + %.1f) | %.1f | %.2fx | %.2fx |%n",
          f.workload(), f.client(), f.nodes(), f.valuesPerSecond(), f.totalMicros(), f.nodeMicros(), f.clientMicros(),
          f.jitMicros(), f.totalMicros() / one.totalMicros(), f.withoutJitMicros() / one.withoutJitMicros()));
    }
    sb.append("\nWarm-ups: ").append(String.join("; ", warmUps)).append(".\n");
    if (!unavailable.isEmpty()) {
      List<Long> sorted = new ArrayList<>(unavailable);
      sorted.sort(null);
      sb.append(String.format(Locale.ROOT, "%nMove unavailability under write load, %d moves on 3 nodes (the "
          + "longest wait of single-row writes to the moving tablet): p50 %d ms, p99 %d ms, max %d ms.%n",
          sorted.size(), sorted.get(sorted.size() / 2), sorted.get(Math.min(sorted.size() - 1,
              (int) Math.ceil(0.99 * sorted.size()) - 1)), sorted.get(sorted.size() - 1)));
    }
    return sb.toString();
  }

  /**
   * CPU time used so far by the node processes and by this one, and, of the nodes' time, how
   * much their JIT compiler threads used (every JVM compiles the same code for itself, so
   * three nodes compile about three times as much while they warm up).
   */
}
