package io.tabula.bench.e2e;

import io.tabula.bench.ResultsFile;
import com.google.protobuf.ByteString;
import io.tabula.client.Filter;
import io.tabula.client.GcPolicy;
import io.tabula.client.TabulaClient;
import io.tabula.client.RowMutation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import site.ycsb.generator.ZipfianGenerator;

/**
 * Hot-tablet splits under a skewed load, never part of the test verdict: YCSB's workload A
 * mix (half reads, half updates of single rows) with Zipfian keys (YCSB's generator, not
 * scrambled: the most popular rows sit together at the start of the key space, where a split
 * at the middle of a tablet's bytes would not help) against a table created as one tablet on
 * a cluster of node JVMs on this machine. Run twice side by side, on fresh clusters: with
 * hot-tablet splits off, then on. Every window reports the throughput, the table's tablets and
 * each node's share of the rows read and written.
 *
 * <p>All the node JVMs share this machine's cores with the client, so spreading the load over
 * the nodes shows as an even share per node more than as throughput: on separate machines the
 * nodes' CPU adds up.
 */
public final class HotSplitBench implements Callable<Integer> {
  @Option(names = "--nodes", defaultValue = "3", description = "Node JVMs; default: ${DEFAULT-VALUE}")
  private int nodes;

  @Option(names = "--seconds", defaultValue = "150", description = "Load per run; default: ${DEFAULT-VALUE}")
  private int seconds;

  @Option(names = "--window", defaultValue = "10", description = "Seconds per reported window; default: "
      + "${DEFAULT-VALUE}")
  private int window;

  @Option(names = "--keys", defaultValue = "1000000", description = "Rows the Zipfian picks from; default: "
      + "${DEFAULT-VALUE}")
  private long keys;

  @Option(names = "--concurrency", defaultValue = "32", description = "Requests in flight; default: ${DEFAULT-VALUE}")
  private int concurrency;

  @Option(names = "--hot-for", defaultValue = "10s", description = "tabula.master.hot-split.for in the run with "
      + "hot splits; default: ${DEFAULT-VALUE}")
  private String hotFor;

  @Option(names = "--node-java-opts", defaultValue = "-Xms512m -Xmx512m -XX:+UseG1GC",
      description = "Each node JVM's options; default: ${DEFAULT-VALUE}")
  private String nodeJavaOpts;

  @Option(names = "--out", defaultValue = "bench/results/hot-splits.md", description = "Report file; default: "
      + "${DEFAULT-VALUE}")
  private Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  private static final String TABLE = "zipf";
  private static final Filter LATEST = Filter.latest(1);
  private static final Pattern NODE = Pattern.compile("\"name\":\"([^\"]+)\".*?\"opsPerSecond\":([0-9.]+)");

  /** One window of one run. */
  private record Window(double second, double opsPerSecond, int tablets, Map<String, Long> nodeOps) {
    /** The busiest node's share of the rows read and written, in percent. */
    double topShare() {
      long total = nodeOps.values().stream().mapToLong(Long::longValue).sum();
      long top = nodeOps.values().stream().mapToLong(Long::longValue).max().orElse(0);
      return total == 0 ? 0 : 100.0 * top / total;
    }
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new HotSplitBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    List<Window> off = run("0s");
    List<Window> on = run(hotFor);
    String report = report(off, on);
    System.out.println(report);
    ResultsFile.write(out, report);
    return 0;
  }

  private List<Window> run(String hotSplitFor) throws Exception {
    Path conf = Files.createTempFile("tabula-hot-", ".conf");
    Files.writeString(conf, "tabula.master.hot-split.for = " + hotSplitFor + "\n");
    List<Window> windows = new ArrayList<>();
    try (BenchCluster cluster = BenchCluster.start(nodes, n -> nodeJavaOpts, List.of("--config", conf.toString()));
        TabulaClient client = TabulaClient.connect(cluster.endpoint(0))) {
      // One version per cell, and reads of the newest only, as YCSB's Bigtable binding reads: otherwise the
      // popular rows pile up versions that every read returns, and the load slows down as it runs.
      client.admin().createTable(TABLE, Map.of("f", GcPolicy.maxVersions(1))).toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
      cluster.awaitReady();
      ZipfianGenerator zipf = new ZipfianGenerator(keys);
      byte[] value = new byte[100];
      LongFunction<CompletionStage<Integer>> request = k -> {
        String key = String.format(Locale.ROOT, "user%012d", zipf.nextValue());
        if (ThreadLocalRandom.current().nextBoolean()) {
          return client.readRow(TABLE, ByteString.copyFromUtf8(key), LATEST).thenApply(r -> 1);
        }
        return client.apply(TABLE, RowMutation.create(key).setCell("f", "v", new String(value))).thenApply(v -> 1);
      };
      long start = System.nanoTime();
      for (int w = 0; w < seconds / window; w++) {
        InFlight.Result r = InFlight.run(concurrency, Long.MAX_VALUE,
            System.nanoTime() + TimeUnit.SECONDS.toNanos(window), request);
        Window win = new Window((System.nanoTime() - start) / 1e9, r.valuesPerSecond(),
            cluster.tablets(TABLE).size(), nodeOps(cluster));
        windows.add(win);
        System.err.printf(Locale.ROOT, "hot splits %s: %.0f s, %.0f ops/s, %d tablets, busiest node %.0f%% %s%n",
            hotSplitFor, win.second, win.opsPerSecond, win.tablets, win.topShare(), win.nodeOps);
      }
    } finally {
      Files.deleteIfExists(conf);
    }
    return windows;
  }

  private static Map<String, Long> nodeOps(BenchCluster cluster) throws Exception {
    Map<String, Long> out = new TreeMap<>();
    Matcher m = NODE.matcher(cluster.get("/tabula/nodes"));
    while (m.find()) {
      out.put(m.group(1), Math.round(Double.parseDouble(m.group(2))));
    }
    return out;
  }

  private String report(List<Window> off, List<Window> on) {
    StringBuilder sb = new StringBuilder("# Hot-tablet splits under a Zipfian load\n\n");
    sb.append(ResultsFile.machineLine());
    sb.append("Command: `").append(ResultsFile.command(HotSplitBench.class, spec)).append("`\n\n");
    sb.append(String.format(Locale.ROOT, "%d node JVMs and the client on this machine; YCSB workload A's mix (50%% "
        + "reads of the newest version, 50%% single-row updates of 100-byte values, one version kept) over %,d rows "
        + "with YCSB's Zipfian generator (constant "
        + "0.99, not scrambled: the popular rows sit together at the start of the key space), %d requests in "
        + "flight through the Tabula client; the table starts as one tablet. Same load twice, each on a fresh "
        + "cluster: hot-tablet splits off (`tabula.master.hot-split.for = 0s`), then on (`for = %s`).%n%n", nodes,
        keys, concurrency, hotFor));
    sb.append("| run | first window ops/s | last window ops/s | tablets at the end | busiest node's share, first → "
        + "last window |\n|---|---:|---:|---:|---|\n");
    for (List<Window> run : List.of(off, on)) {
      Window first = run.get(0);
      Window last = run.get(run.size() - 1);
      sb.append(String.format(Locale.ROOT, "| hot splits %s | %.0f | %.0f | %d | %.0f%% → %.0f%% |%n",
          run == off ? "off" : "on", first.opsPerSecond, last.opsPerSecond, last.tablets, first.topShare(),
          last.topShare()));
    }
    double ratio = on.get(on.size() - 1).opsPerSecond / off.get(off.size() - 1).opsPerSecond;
    sb.append(String.format(Locale.ROOT, "%nLast window, on over off: %.2f× the throughput.%n", ratio));
    for (List<Window> run : List.of(off, on)) {
      sb.append("\n### Hot splits ").append(run == off ? "off" : "on").append("\n\n| second | ops/s | tablets | "
          + "rows/s per node (as the master last heard) |\n|---:|---:|---:|---|\n");
      for (Window w : run) {
        sb.append(String.format(Locale.ROOT, "| %.0f | %.0f | %d | %s |%n", w.second, w.opsPerSecond, w.tablets,
            w.nodeOps));
      }
    }
    return sb.toString();
  }
}
