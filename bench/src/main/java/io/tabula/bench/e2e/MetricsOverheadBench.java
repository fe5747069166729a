package io.tabula.bench.e2e;

import io.tabula.bench.Dataset;
import io.tabula.bench.ResultsFile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * What the node's metrics cost, never part of the test verdict: two node JVMs on this
 * machine, one with {@code tabula.node.metrics = on} (the default) and one with it off, driven
 * in turns by the end-to-end benchmark's clients (the Tabula client and the official Java
 * client) with the same workloads: random writes and random reads, in the end-to-end
 * benchmark's batches (200-row writes, 25-row reads) and one row per call (where per-call
 * costs such as timing a gRPC call weigh most). Each timed window runs on one node while the
 * other idles; the order alternates every round, and the report pools the rounds: node CPU
 * microseconds per value, on against off.
 *
 * <p>What "off" leaves out: the gRPC calls' timing and the Prometheus registry. The tablets'
 * own load counters (rows and bytes read and written, the key sample) stay: the master's
 * balancer, key visualizer and hot-tablet splits use them.
 */
public final class MetricsOverheadBench implements Callable<Integer> {
  @Option(names = "--rows", defaultValue = "60000", description = "Rows per client; default: ${DEFAULT-VALUE}")
  private int rows;

  @Option(names = "--value-bytes", defaultValue = "1000", description = "Value size; default: ${DEFAULT-VALUE}")
  private int valueBytes;

  @Option(names = "--rounds", defaultValue = "3", description = "Turns of every workload on both nodes; default: "
      + "${DEFAULT-VALUE}")
  private int rounds;

  @Option(names = "--runs", defaultValue = "2", description = "Fresh pairs of nodes, one after the other (which "
      + "starts first alternates); default: ${DEFAULT-VALUE}")
  private int runs;

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
    Dataset data = new Dataset(rows, valueBytes, 42);
    Map<String, Tally> tallies = new LinkedHashMap<>();
    for (int run = 0; run < runs; run++) {
      run(data, tallies, run % 2 == 0);
    }
    String report = report(tallies);
    System.out.println(report);
    ResultsFile.write(out, report);
    return 0;
  }

  /** One pair of fresh nodes, the one with metrics started first if {@code onFirst}, through every round. */
  private void run(Dataset data, Map<String, Tally> tallies, boolean onFirst) throws Exception {
    List<String> opts = List.of(nodeJavaOpts.trim().split("\\s+"));
    try (NodeProcess first = NodeProcess.start(config(onFirst), opts, Duration.ofSeconds(90));
        NodeProcess second = NodeProcess.start(config(!onFirst), opts, Duration.ofSeconds(90))) {
      NodeProcess on = onFirst ? first : second;
      NodeProcess off = onFirst ? second : first;
      List<NodeProcess> nodes = List.of(off, on);
      Map<NodeProcess, List<ClientUnderTest>> clients = new LinkedHashMap<>();
      try {
        for (NodeProcess n : nodes) {
          List<ClientUnderTest> l = new ArrayList<>();
          for (String c : clientNames) {
            ClientUnderTest cut = switch (c) {
              case "tabula" -> new TabulaClientUnderTest(n.endpoint(), data, 200);
              case "official" -> new OfficialClientUnderTest(n.port(), data, true, 0, 1);
              default -> throw new CommandLine.ParameterException(spec.commandLine(), "unknown client " + c);
            };
            cut.createTable("t_" + c);
            l.add(cut);
          }
          clients.put(n, l);
        }
        // Untimed: every row written once and every workload run once on both nodes, for the JIT compilers.
        for (NodeProcess n : nodes) {
          for (int k = 0; k < clientNames.size(); k++) {
            for (Work w : WORKS) {
              window(clients.get(n).get(k), "t_" + clientNames.get(k), w, data, n, 4);
            }
          }
        }
        for (int round = 0; round < rounds; round++) {
          List<NodeProcess> order = round % 2 == 0 ? nodes : List.of(on, off);
          for (Work w : WORKS) {
            for (int k = 0; k < clientNames.size(); k++) {
              for (NodeProcess n : order) {
                ClientUnderTest c = clients.get(n).get(k);
                long[] r = window(c, "t_" + clientNames.get(k), w, data, n, seconds);
                Tally t = tallies.computeIfAbsent(key(w, clientNames.get(k), n == on), x -> new Tally());
                t.values += r[0];
                t.nanos += r[1];
                t.nodeCpu += r[2];
                t.windows.add(r[2] / 1e3 / r[0]);
                System.err.printf(Locale.ROOT, "round %d, %s, %s, metrics %s: %.0f values/s, %.1f us/value%n",
                    round + 1, w.name, clientNames.get(k), n == on ? "on" : "off", r[0] * 1e9 / r[1],
                    r[2] / 1e3 / r[0]);
              }
            }
          }
        }
      } finally {
        for (List<ClientUnderTest> l : clients.values()) {
          for (ClientUnderTest c : l) {
            c.close();
          }
        }
      }
    }
  }

  private static String key(Work w, String client, boolean on) {
    return w.name + "|" + client + "|" + (on ? "on" : "off");
  }

  private static String config(boolean metrics) {
    return "tabula.node {\n  durability = fsync\n  metrics = " + (metrics ? "on" : "off") + "\n}\n";
  }

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

  private String report(Map<String, Tally> tallies) {
    StringBuilder sb = new StringBuilder("# What the node's metrics cost\n\n");
    sb.append(ResultsFile.machineLine()).append('\n');
    sb.append("Command: `").append(ResultsFile.command(MetricsOverheadBench.class, spec)).append("`\n\n");
    sb.append(String.format(Locale.ROOT, "Two node JVMs (`%s`), `tabula.node.metrics = on` and `off`, taking turns "
        + "under the same load (the other idles); %,d rows of %d-byte values per client, %d requests in flight, "
        + "%d runs (fresh nodes each, which starts first alternating) of %d rounds of %d s windows per workload, "
        + "client and node, the order of the nodes alternating each round. "
        + "Node CPU is the node process's CPU time over the window; \"off\" leaves out the gRPC calls' timing and "
        + "the Prometheus registry (the tablets' load counters stay: the master uses them).%n%n", nodeJavaOpts,
        rows, valueBytes, concurrency, runs, rounds, seconds));
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
