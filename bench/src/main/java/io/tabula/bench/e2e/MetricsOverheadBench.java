package io.tabula.bench.e2e;

import io.tabula.bench.Dataset;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tabula.bench.ResultsFile;
import io.tabula.cluster.metrics.GrpcMetrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Trailer;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * What the node's metrics cost, never part of the test verdict: one node JVM on this machine
 * with its metrics on (the default), driven by the end-to-end benchmark's clients (the Tabula
 * client and the official Java client) with random writes and random reads, in the end-to-end
 * benchmark's batches (200-row writes, 25-row reads) and one row per call (where per-call costs
 * such as timing a gRPC call weigh most). Every window is run twice back to back, with the
 * timing of gRPC calls paused ({@code POST /metrics/recording?on=false}) and running, in an
 * order that alternates every round; the report pools the rounds: node CPU microseconds per
 * value, on against off. One process for both, so the comparison is not between two JVMs'
 * JIT compilations and heaps (two node processes differed by up to 25% either way here).
 *
 * <p>What "off" leaves out is the per-call work: timing each call by method and status. What
 * stays is work per scrape (none here: nothing scrapes) and the tablets' own load counters
 * (rows and bytes read and written, the key sample), which the master's balancer, key
 * visualizer and hot-tablet splits use with or without metrics.
 */
public final class MetricsOverheadBench implements Callable<Integer> {
  @Option(names = "--rows", defaultValue = "60000", description = "Rows per client; default: ${DEFAULT-VALUE}")
  private int rows;

  @Option(names = "--value-bytes", defaultValue = "1000", description = "Value size; default: ${DEFAULT-VALUE}")
  private int valueBytes;

  @Option(names = "--rounds", defaultValue = "4", description = "Turns of every workload with the timing paused and running; default: "
      + "${DEFAULT-VALUE}")
  private int rounds;

  @Option(names = "--seconds", defaultValue = "8", description = "Timed window per workload and node; default: "
      + "${DEFAULT-VALUE}")
  private int seconds;

  @Option(names = "--concurrency", defaultValue = "32", description = "Requests in flight; default: ${DEFAULT-VALUE}")
  private int concurrency;

  @Option(names = "--clients", split = ",", description = "tabula, official; default: both")
  private List<String> clientNames = List.of("tabula", "official");

  @Option(names = "--node-java-opts", defaultValue = "-Xms1g -Xmx1g -XX:+UseG1GC -XX:+AlwaysPreTouch",
      description = "Each node JVM's options; default: ${DEFAULT-VALUE}")
  private String nodeJavaOpts;

  @Option(names = "--out", defaultValue = "bench/results/metrics-overhead.md", description = "Report file; default: "
      + "${DEFAULT-VALUE}")
  private Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  /** One workload: a name and, per client, its requests. */
  private record Work(String name, int perRequest, boolean write) {}

  private static final List<Work> WORKS = List.of(new Work("random-write, 200 rows per call", 200, true),
      new Work("random-read, 25 rows per call", 25, false), new Work("random-write, 1 row per call", 1, true),
      new Work("random-read, 1 row per call", 1, false));

  /** Pooled figures of one workload, client and node: values, nanoseconds, node CPU nanoseconds. */
  private static final class Tally {
    long values;
    long nanos;
    long nodeCpu;
    /** CPU per value of each window, in order. */
    final List<Double> windows = new ArrayList<>();

    double valuesPerSecond() {
      return values * 1e9 / nanos;
    }

    double cpuMicrosPerValue() {
      return nodeCpu / 1e3 / values;
    }
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new MetricsOverheadBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    double[] perCall = timingPerCall();
    Dataset data = new Dataset(rows, valueBytes, 42);
    Map<String, Tally> tallies = new LinkedHashMap<>();
    try (NodeProcess node = NodeProcess.start(CONFIG, List.of(nodeJavaOpts.trim().split("\\s+")),
        Duration.ofSeconds(90))) {
      int http = node.httpPort();
      List<ClientUnderTest> clients = new ArrayList<>();
      try {
        for (String c : clientNames) {
          ClientUnderTest cut = switch (c) {
            case "tabula" -> new TabulaClientUnderTest(node.endpoint(), data, 200);
            case "official" -> new OfficialClientUnderTest(OfficialEndpoint.emulator(node.port()), data, true, 0, 1);
            default -> throw new CommandLine.ParameterException(spec.commandLine(), "unknown client " + c);
          };
          cut.createTable("t_" + c);
          clients.add(cut);
        }
        // Untimed: every row written and every workload run once, for the JIT compilers.
        for (int k = 0; k < clients.size(); k++) {
          for (Work w : WORKS) {
            window(clients.get(k), "t_" + clientNames.get(k), w, data, node, 4);
          }
        }
        for (int round = 0; round < rounds; round++) {
          List<Boolean> order = round % 2 == 0 ? List.of(false, true) : List.of(true, false);
          for (Work w : WORKS) {
            for (int k = 0; k < clients.size(); k++) {
              for (boolean on : order) {
                recording(http, on);
                long[] r = window(clients.get(k), "t_" + clientNames.get(k), w, data, node, seconds);
                Tally t = tallies.computeIfAbsent(key(w, clientNames.get(k), on), x -> new Tally());
                t.values += r[0];
                t.nanos += r[1];
                t.nodeCpu += r[2];
                t.windows.add(r[2] / 1e3 / r[0]);
                System.err.printf(Locale.ROOT, "round %d, %s, %s, metrics %s: %.0f values/s, %.1f us/value%n",
                    round + 1, w.name, clientNames.get(k), on ? "on" : "off", r[0] * 1e9 / r[1],
                    r[2] / 1e3 / r[0]);
              }
            }
          }
        }
        recording(http, true);
      } finally {
        for (ClientUnderTest c : clients) {
          c.close();
        }
      }
    }
    String report = report(tallies, perCall);
    System.out.println(report);
    ResultsFile.write(out, report);
    return 0;
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final int CALLS = 2_000_000;

  /**
   * What timing one call costs, alone: nanoseconds per call through the node's gRPC timing
   * ({@code GrpcMetrics}) around a handler that answers at once with status OK in a trailer,
   * running and paused, in this JVM after a warm-up. {running, paused}.
   */
  private static double[] timingPerCall() throws Exception {
    GrpcMetrics metrics = new GrpcMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    HttpResponse ok = HttpResponse.create().addAttribute(AttributeKeys.trailer,
        Trailer.create().addHeader(RawHeader.create("grpc-status", "0")));
    CompletableFuture<HttpResponse> answer = CompletableFuture.completedFuture(ok);
    org.apache.pekko.japi.function.Function<HttpRequest, CompletionStage<HttpResponse>> timed =
        metrics.timed(r -> answer);
    HttpRequest request = HttpRequest.create("/google.bigtable.v2.Bigtable/MutateRow");
    double[] out = new double[2];
    for (int pass = 0; pass < 6; pass++) {
      boolean on = pass % 2 == 0;
      metrics.recording(on);
      long t = System.nanoTime();
      for (int i = 0; i < CALLS; i++) {
        timed.apply(request).toCompletableFuture().join();
      }
      if (pass >= 2) {
        out[on ? 0 : 1] += (System.nanoTime() - t) / (double) CALLS / 2;
      }
    }
    return out;
  }

  /** Pauses or resumes the node's timing of gRPC calls. */
  private static void recording(int http, boolean on) throws Exception {
    java.net.http.HttpResponse<String> r = HTTP.send(java.net.http.HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http
        + "/metrics/recording?on=" + on)).POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
        BodyHandlers.ofString());
    if (r.statusCode() != 200 || !r.body().contains("\"recording\":" + on)) {
      throw new IllegalStateException("POST /metrics/recording?on=" + on + ": " + r.statusCode() + " " + r.body());
    }
  }

  private static String key(Work w, String client, boolean on) {
    return w.name + "|" + client + "|" + (on ? "on" : "off");
  }

  private static final String CONFIG = "tabula.node {\n  durability = fsync\n  metrics = on\n}\n";

  /** One window of {@code w}: {values, nanoseconds, node CPU nanoseconds}. */
  private long[] window(ClientUnderTest c, String table, Work w, Dataset data, NodeProcess node, int windowSeconds)
      throws Exception {
    int[] order = data.permutation(0x5EEDL + w.perRequest);
    SplittableRandom random = new SplittableRandom(w.perRequest);
    LongFunction<CompletionStage<Integer>> request;
    if (w.write) {
      long perPass = (order.length + w.perRequest - 1) / w.perRequest;
      request = k -> {
        int from = (int) (k % perPass * w.perRequest);
        return c.write(table, order, from, Math.min(order.length, from + w.perRequest));
      };
    } else {
      request = k -> {
        java.util.TreeSet<Integer> distinct = new java.util.TreeSet<>();
        while (distinct.size() < w.perRequest) {
          distinct.add(random.nextInt(rows));
        }
        int[] keys = distinct.stream().mapToInt(Integer::intValue).toArray();
        return c.read(table, keys, 0, keys.length);
      };
    }
    CpuUse before = CpuUse.now(node.pid());
    InFlight.Result r = InFlight.run(concurrency, Long.MAX_VALUE,
        System.nanoTime() + TimeUnit.SECONDS.toNanos(windowSeconds), request);
    CpuUse used = CpuUse.now(node.pid()).minus(before);
    return new long[] {r.values(), r.nanos(), used.nodeNanos()};
  }

  private String report(Map<String, Tally> tallies, double[] perCall) {
    StringBuilder sb = new StringBuilder("# What the node's metrics cost\n\n");
    sb.append(ResultsFile.machineLine());
    sb.append("Command: `").append(ResultsFile.command(MetricsOverheadBench.class, spec)).append("`\n\n");
    sb.append(String.format(Locale.ROOT, "One node JVM (`%s`) with its metrics on; every window run twice back to "
        + "back, with the timing of gRPC calls paused (`POST /metrics/recording?on=false`, \"off\") and running "
        + "(\"on\"), the order alternating each round; %,d rows of %d-byte values per client, %d requests in "
        + "flight, %d rounds of %d s windows per workload, client and setting. Node CPU is the node process's CPU "
        + "time over the window. The tablets' load counters run in both (the master uses them).%n%n",
        nodeJavaOpts, rows, valueBytes, concurrency, rounds, seconds));
    // The node CPU of one call (per value times values per call) of the workload whose calls cost least.
    double cheapest = Double.MAX_VALUE;
    String cheapestName = "";
    for (Work w : WORKS) {
      for (String c : clientNames) {
        Tally off = tallies.get(key(w, c, false));
        if (off != null && off.cpuMicrosPerValue() * w.perRequest < cheapest) {
          cheapest = off.cpuMicrosPerValue() * w.perRequest;
          cheapestName = w.name + ", " + c;
        }
      }
    }
    double ns = perCall[0] - perCall[1];
    sb.append(String.format(Locale.ROOT, "Timing one call, alone (2,000,000 calls in this JVM around a handler that "
        + "answers at once): %.0f ns running, %.0f ns paused, so %.0f ns per call. The cheapest call below costs the "
        + "node %.1f µs of CPU (%s): timing it adds %.2f%%; a call of many rows spreads the same %.0f ns over them."
        + "%n%n", perCall[0], perCall[1], ns, cheapest, cheapestName, 100 * ns / 1000 / cheapest, ns));
    sb.append("\"On vs off\" compares the pooled CPU per value; \"per window pair\" gives the median and the range "
        + "of on over off for the windows run back to back, which shows how far this machine's noise reaches.\n\n");
    sb.append("| workload | client | values/s off | values/s on | node CPU µs/value off | on | on vs off | per window "
        + "pair: median (range) |\n|---|---|---:|---:|---:|---:|---:|---|\n");
    for (Work w : WORKS) {
      for (String c : clientNames) {
        Tally off = tallies.get(key(w, c, false));
        Tally on = tallies.get(key(w, c, true));
        if (off == null || on == null) {
          continue;
        }
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < Math.min(on.windows.size(), off.windows.size()); i++) {
          ratios.add(100 * (on.windows.get(i) / off.windows.get(i) - 1));
        }
        ratios.sort(Double::compare);
        double median = ratios.isEmpty() ? Double.NaN : ratios.size() % 2 == 1 ? ratios.get(ratios.size() / 2)
            : (ratios.get(ratios.size() / 2 - 1) + ratios.get(ratios.size() / 2)) / 2;
        sb.append(String.format(Locale.ROOT, "| %s | %s | %,.0f | %,.0f | %.2f | %.2f | %+.1f%% | %+.1f%% (%+.1f%% to "
            + "%+.1f%%) |%n", w.name, c, off.valuesPerSecond(), on.valuesPerSecond(), off.cpuMicrosPerValue(),
            on.cpuMicrosPerValue(), 100 * (on.cpuMicrosPerValue() / off.cpuMicrosPerValue() - 1), median,
            ratios.isEmpty() ? Double.NaN : ratios.get(0), ratios.isEmpty() ? Double.NaN
                : ratios.get(ratios.size() - 1)));
      }
    }
    return sb.toString();
  }
}
