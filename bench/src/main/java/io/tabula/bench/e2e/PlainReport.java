package io.tabula.bench.e2e;

import io.tabula.bench.JfrDigest;
import io.tabula.bench.ResultsFile;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

/** The Markdown report of {@link PlainCallsBench}. */
final class PlainReport {
  /** One workload's run: what it called, what {@link InFlight} measured, the CPU both processes used. */
  record Measure(PlainWorkload workload, String api, InFlight.Result result, CpuUse cpu, double leftMicros) {
    Measure plus(Measure other) {
      long n = result.values() + other.result.values();
      double left = n == 0 ? 0 : (leftMicros * result.values() + other.leftMicros * other.result.values()) / n;
      return new Measure(workload, api, result.plus(other.result), cpu.plus(other.cpu), left);
    }

    double serverMicrosPerValue() {
      return result.values() == 0 ? Double.NaN : cpu.nodeNanos() / 1e3 / result.values();
    }

    double clientMicrosPerValue() {
      return result.values() == 0 ? Double.NaN : cpu.clientNanos() / 1e3 / result.values();
    }

    /** The figure that ranks this workload: values/s, or for lone calls the median latency in ms. */
    double figure() {
      return workload.isLone() ? result.latencyMs(0.5) : result.valuesPerSecond();
    }

    /** How many times better this is than {@code other}: above 1 when ahead. */
    double timesBetterThan(double other) {
      return workload.isLone() ? other / figure() : figure() / other;
    }

    String figureText() {
      return workload.isLone() ? String.format(Locale.ROOT, "p50 %.3f ms", figure())
          : String.format(Locale.ROOT, "%,.0f/s", figure());
    }
  }

  /**
   * One set of workloads.
   *
   * @param target "Tabula" or "emulator"
   * @param client the client library's name
   * @param round 0 for the first set of this client on this target
   */
  record Run(String target, String client, int round, List<Measure> measures) {
  }

  /**
   * HBase 2.6.1 here, the same way (issue 18's figures): values/s of the faster end of its
   * range, or for lone calls its median latency in ms.
   */
  private static final Map<PlainWorkload, Double> HBASE = new EnumMap<>(Map.of(
      PlainWorkload.SEQ_UNARY_WRITE, 13_892.0,
      PlainWorkload.RANDOM_UNARY_WRITE, 14_656.0,
      PlainWorkload.SEQ_LOAD, 137_384.0,
      PlainWorkload.RANDOM_LOAD, 111_664.0,
      PlainWorkload.RANDOM_UNARY_READ, 25_664.0,
      PlainWorkload.SEQ_UNARY_READ, 32_832.0,
      PlainWorkload.SCAN, 278_533.0,
      PlainWorkload.LONE_WRITE, 0.409,
      PlainWorkload.LONE_READ, 0.163));

  private static final String OFFICIAL = "official client";
  private static final String TABULA_CLIENT = "Tabula client";

  private final String command;
  private final String settings;
  private final double readySeconds;
  private final double[] fsyncBefore;
  private final double[] fsyncAfter;
  private final List<Run> runs;
  private final String loadBefore;
  private final String loadAfter;

  PlainReport(String command, String settings, double readySeconds, double[] fsyncBefore, double[] fsyncAfter,
      List<Run> runs, String loadBefore, String loadAfter) {
    this.command = command;
    this.settings = settings;
    this.readySeconds = readySeconds;
    this.fsyncBefore = fsyncBefore;
    this.fsyncAfter = fsyncAfter;
    this.runs = runs;
    this.loadBefore = loadBefore;
    this.loadAfter = loadAfter;
  }

  String markdown(List<JfrDigest.Digest> recorded) {
    StringBuilder s = new StringBuilder();
    s.append("# Plain single-row calls: Tabula vs Google's emulator (official client), and the Tabula client vs "
        + "HBase's figures\n\n");
    s.append(ResultsFile.machineLine());
    s.append("Command: `").append(command).append("`\n\n");
    s.append(settings).append("\n\n");
    s.append(String.format(Locale.ROOT, "The node (`tabula server`, its own JVM) was serving %.1f s after its "
        + "process started. Its first set below is its first work. fsync of a 1 KiB append in the same folder: "
        + "p50 %.3f ms, p99 %.3f ms before the sets, p50 %.3f ms, p99 %.3f ms after. Load average before: %s; "
        + "after: %s.%n%n", readySeconds, fsyncBefore[0], fsyncBefore[1], fsyncAfter[0], fsyncAfter[1], loadBefore,
        loadAfter));
    official(s);
    tabulaClient(s);
    details(s);
    s.append(JfrDigest.section("The node process's flight recording, for each of its workloads (the file syncs "
        + "are the commit log's and the flushes').", recorded));
    return s.toString();
  }

  private void official(StringBuilder s) {
    s.append("## The official client: Tabula vs the emulator\n\n");
    s.append("Values per second (lone calls: median latency). *Fresh* is the node's first set, *warm* its later "
        + "sets pooled; the emulator's sets are pooled. Ratios are Tabula over the emulator, above 1 when "
        + "Tabula is ahead.\n\n");
    s.append("| workload | call | Tabula fresh | Tabula warm | emulator | fresh ÷ emulator | warm ÷ emulator | "
        + "node CPU µs/value (warm) | emulator CPU µs/value |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (PlainWorkload w : PlainWorkload.values()) {
      Measure fresh = pooled(w, r -> r.target().equals("Tabula") && r.client().equals(OFFICIAL) && r.round() == 0);
      Measure warm = pooled(w, r -> r.target().equals("Tabula") && r.client().equals(OFFICIAL) && r.round() > 0);
      Measure emulator = pooled(w, r -> r.target().equals("emulator"));
      if (fresh == null && emulator == null) {
        continue;
      }
      Measure any = fresh != null ? fresh : emulator;
      s.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", w.label(), any.api(),
          text(fresh), text(warm), text(emulator), ratio(fresh, emulator), ratio(warm, emulator),
          micros(warm == null ? null : warm.serverMicrosPerValue()),
          micros(emulator == null ? null : emulator.serverMicrosPerValue())));
    }
    Measure lone = pooled(PlainWorkload.LONE_WRITE, r -> r.target().equals("Tabula") && r.client().equals(OFFICIAL)
        && r.round() > 0);
    if (lone != null) {
      double fsync = (fsyncBefore[0] + fsyncAfter[0]) / 2;
      s.append(String.format(Locale.ROOT, "%nA lone durable `mutateRow` on the warm node: p50 %.3f ms, %.3f ms above "
          + "this disk's fsync p50 of %.3f ms (the target is at most 0.25 ms above).%n", lone.figure(),
          lone.figure() - fsync, fsync));
    }
    s.append('\n');
  }

  private void tabulaClient(StringBuilder s) {
    Predicate<Run> tabula = r -> r.client().equals(TABULA_CLIENT);
    if (runs.stream().noneMatch(tabula)) {
      return;
    }
    int last = runs.stream().filter(tabula).mapToInt(Run::round).max().orElse(0);
    Predicate<Run> counted = last == 0 ? tabula : tabula.and(r -> r.round() > 0);
    s.append("## The Tabula client vs HBase 2.6.1's figures here\n\n");
    s.append("HBase's figures are issue 18's (a one-RegionServer mini cluster on this machine, its asynchronous "
        + "client, client and server in one JVM; the faster end of each range). Tabula's node and client are "
        + "separate processes; ").append(last == 0 ? "its one set" : "its sets after the first, pooled")
        .append(". The node's CPU per value is the figure that carries to a cluster.\n\n");
    s.append("| workload | call | Tabula client | p50 ms | p99 ms | node CPU µs/value | client CPU µs/value | HBase | "
        + "Tabula ÷ HBase |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (PlainWorkload w : PlainWorkload.values()) {
      Measure m = pooled(w, counted);
      if (m == null) {
        continue;
      }
      double hbase = HBASE.get(w);
      s.append(String.format(Locale.ROOT, "| %s | %s | %s | %.3f | %.3f | %s | %s | %s | %.2f |%n", w.label(),
          m.api(), m.figureText(), m.result().latencyMs(0.5), m.result().latencyMs(0.99),
          micros(m.serverMicrosPerValue()), micros(m.clientMicrosPerValue()),
          w.isLone() ? String.format(Locale.ROOT, "p50 %.3f ms", hbase) : String.format(Locale.ROOT, "%,.0f/s", hbase),
          m.timesBetterThan(hbase)));
    }
    s.append('\n');
  }

  private void details(StringBuilder s) {
    s.append("## Every set\n\n| target | client | set | workload | values/s | p50 ms | p99 ms | longest gap ms "
        + "| server CPU µs/value | server CPU µs/value after | client CPU µs/value |\n"
        + "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Run r : runs) {
      for (Measure m : r.measures()) {
        s.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %,.0f | %.3f | %.3f | %s | %s | %s | %s |%n",
            r.target(), r.client(), r.round() + 1, m.workload().label(), m.result().valuesPerSecond(),
            m.result().latencyMs(0.5), m.result().latencyMs(0.99),
            m.workload() == PlainWorkload.SCAN ? "–" : String.format(Locale.ROOT, "%.1f",
                m.result().longestGapNanos() / 1e6),
            micros(m.serverMicrosPerValue()), m.workload().isWrite() ? micros(m.leftMicros()) : "–",
            micros(m.clientMicrosPerValue())));
      }
    }
    s.append("\nA scan is one call, so its p50 and p99 are that call's time. A batched load's latencies are each "
        + "row's, from the call that handed it over to its acknowledgement. *Longest gap*: the longest time in the run "
        + "without an acknowledgement (a stall shows there; a long queue shows in p50 and p99 instead). *After*: the server's CPU per value "
        + "written from the end of a write run until it idled (its flushes and compactions; the next run "
        + "started then).\n");
  }

  /** The runs {@code which} selects pooled for workload {@code w}, or null if none ran it. */
  private Measure pooled(PlainWorkload w, Predicate<Run> which) {
    Measure sum = null;
    for (Run r : runs) {
      if (!which.test(r)) {
        continue;
      }
      for (Measure m : r.measures()) {
        if (m.workload() == w) {
          sum = sum == null ? m : sum.plus(m);
        }
      }
    }
    return sum;
  }

  private static String text(Measure m) {
    return m == null ? "–" : m.figureText();
  }

  private static String ratio(Measure m, Measure base) {
    if (m == null || base == null) {
      return "–";
    }
    double r = m.timesBetterThan(base.figure());
    return String.format(Locale.ROOT, r >= 1 ? "**%.2f**" : "%.2f", r);
  }

  private static String micros(Double v) {
    return v == null || v.isNaN() ? "–" : String.format(Locale.ROOT, "%.1f", v);
  }
}
