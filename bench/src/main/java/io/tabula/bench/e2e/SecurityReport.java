package io.tabula.bench.e2e;

import io.tabula.bench.JfrDigest;
import io.tabula.bench.ResultsFile;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** The Markdown report of {@link SecurityCostBench}. */
final class SecurityReport {
  /**
   * One timed window of one workload on one node.
   *
   * @param round 0 for the first round
   * @param secure whether the node had TLS and authentication
   * @param pace the values per second the window was paced at, the same on both nodes; 0 at full speed
   * @param cpu CPU time of the node and of the client (this process) in the window
   * @param jitNanos CPU time of the node's JIT compiler threads in the window (part of {@code cpu})
   * @param afterNanos node CPU time after a write window until the node idled (0 for reads)
   */
  record Window(int round, SecurityWorkload workload, boolean secure, double pace, InFlight.Result result,
      CpuUse cpu, long jitNanos, long afterNanos) {
    boolean paced() {
      return pace > 0;
    }

    /** The share of its pace a paced window served. */
    double paceReached() {
      return result.valuesPerSecond() / pace;
    }

    double nodeMicrosPerValue() {
      return cpu.nodeNanos() / 1e3 / result.values();
    }

    double clientMicrosPerValue() {
      return cpu.clientNanos() / 1e3 / result.values();
    }

    double afterMicrosPerValue() {
      return afterNanos / 1e3 / result.values();
    }
  }

  /** A paced window that served less than this share of its pace did not load its node as the other did. */
  private static final double PACE_REACHED = 0.97;

  private final String command;
  private final String settings;
  private final List<SecurityWorkload> workloads;
  private final int rounds;
  private final List<Window> windows;
  private final double[] readySeconds;
  private final double warmUpSeconds;
  private final String loadBefore;
  private final String loadAfter;
  private final Duration took;
  private final List<JfrDigest.Digest> recorded;

  /**
   * @param readySeconds how long the plain node and the secured node took from their starts to answering {@code /ready}
   * @param warmUpSeconds how long the bench's warm-up cycles took
   * @param recorded where each node's time went in its timed windows, when it was recorded
   */
  SecurityReport(String command, String settings, List<SecurityWorkload> workloads, int rounds, List<Window> windows,
      double[] readySeconds, double warmUpSeconds, String loadBefore, String loadAfter, Duration took,
      List<JfrDigest.Digest> recorded) {
    this.command = command;
    this.settings = settings;
    this.workloads = workloads;
    this.rounds = rounds;
    this.windows = windows;
    this.readySeconds = readySeconds.clone();
    this.warmUpSeconds = warmUpSeconds;
    this.loadBefore = loadBefore;
    this.loadAfter = loadAfter;
    this.took = took;
    this.recorded = recorded;
  }

  String markdown() {
    StringBuilder sb = new StringBuilder("# What TLS and authentication cost\n\n");
    sb.append(ResultsFile.machineLine());
    sb.append("Command: `").append(command).append("`\n\n");
    sb.append("Two node JVMs with the same settings on 127.0.0.1, started one after the other: a plain one, and a "
        + "secured one with TLS on its gRPC and Management HTTP ports (a CA and an RSA 3072 node certificate made "
        + "with `openssl` at the start of the run) and `--auth` with one static token, an admin's. Timing starts "
        + "after each answers `/ready` (over HTTPS on the secured node). Google's official Java client drives both "
        + "from one process with its production settings (not the emulator's), one connection each, metrics "
        + "exporters off and DirectPath forced off: plaintext without credentials to the plain node, TLS trusting "
        + "the CA with the token to the secured one. Both nodes run for the whole bench and take turns, which goes "
        + "first alternating by workload and round; each round runs every workload on each node as fast as the "
        + "client goes. Node CPU is the node process's CPU time over the window (`/proc`), its JIT compilers and "
        + "garbage collector included. The client shares the two cores with the nodes and pays for TLS itself "
        + "(its CPU per value is in the last columns), so the secured node may serve fewer values per second, and a "
        + "node serving fewer spends somewhat more CPU on each. One pair of node JVMs serves the whole run: two "
        + "JVMs of one build have differed by up to a quarter here, so a second run (a second pair) shows how far "
        + "that reaches.\n\n");
    sb.append(settings).append("\n\n");
    sb.append(String.format(Locale.ROOT, "The run took %d min %02d s: the plain node answered `/ready` %.1f s after "
        + "its start and the secured one %.1f s after its (the node's own warm-up included), and the bench's "
        + "warm-up took %.0f s. Load average (1 / 5 / 15 min) before: %s; after: %s.%n%n", took.toMinutes(),
        took.toSecondsPart(), readySeconds[0], readySeconds[1], warmUpSeconds, loadBefore, loadAfter));
    summary(sb);
    every(sb);
    sb.append(JfrDigest.section("Each node ran under the flight recorder (`--node-jfr`), which adds to the CPU "
        + "per value of both.", recorded));
    return sb.toString();
  }

  private void summary(StringBuilder sb) {
    boolean paced = windows.stream().anyMatch(Window::paced);
    sb.append(String.format(Locale.ROOT, "## Secured over plain (medians of %d round%s)%n%n", rounds,
        rounds == 1 ? "" : "s"));
    sb.append("*Secured / plain* is the secured node's CPU per value over the plain node's, the median of the rounds' "
        + "ratios; the limits are the issue's: 1.10 for batched calls, 1.20 for single-row calls."
        + (paced ? " *Paced* gives the same ratio for the windows paced at the same rate on both nodes (not judged: "
            + "evenly spaced calls cost both nodes far more per value than pipelined ones)." : "") + "\n\n");
    sb.append("| workload | values/s: plain | secured | node CPU µs/value: plain | secured | secured / plain | "
        + "each round | limit | verdict | client CPU µs/value: plain | secured |" + (paced ? " paced |" : "")
        + "\n|---|---:|---:|---:|---:|---:|---|---:|---|---:|---:|" + (paced ? "---:|" : "") + "\n");
    for (SecurityWorkload w : workloads) {
      List<Double> ratios = ratios(w, false);
      if (ratios.isEmpty()) {
        continue;
      }
      double ratio = median(ratios);
      StringBuilder each = new StringBuilder();
      for (double x : ratios) {
        each.append(each.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.3f", x));
      }
      sb.append(String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | %.2f | %.2f | **%.3f** | %s | %.2f | %s | %.2f | "
          + "%.2f |", w.label(), median(w, false, false, x -> x.result().valuesPerSecond()),
          median(w, true, false, x -> x.result().valuesPerSecond()), median(w, false, false, Window::nodeMicrosPerValue),
          median(w, true, false, Window::nodeMicrosPerValue), ratio, each, w.limit(),
          ratio <= w.limit() ? "PASS" : "FAIL", median(w, false, false, Window::clientMicrosPerValue),
          median(w, true, false, Window::clientMicrosPerValue)));
      if (paced) {
        sb.append(String.format(Locale.ROOT, " %.3f%s |", median(ratios(w, true)), pacedShort(w)));
      }
      sb.append('\n');
    }
    sb.append('\n');
  }

  /** A note when a paced window of {@code w} served less than {@link #PACE_REACHED} of its pace. */
  private String pacedShort(SecurityWorkload w) {
    double reached = windows.stream().filter(m -> m.workload() == w && m.paced()).mapToDouble(Window::paceReached)
        .min().orElse(1);
    return reached < PACE_REACHED ? String.format(Locale.ROOT, " (a window served %.0f%% of its pace)", 100 * reached)
        : "";
  }

  /** Each round's secured over plain CPU per value in its full-speed (or paced) windows of {@code w}. */
  private List<Double> ratios(SecurityWorkload w, boolean paced) {
    List<Double> out = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      Window plain = find(r, w, false, paced);
      Window secure = find(r, w, true, paced);
      if (plain != null && secure != null) {
        out.add(secure.nodeMicrosPerValue() / plain.nodeMicrosPerValue());
      }
    }
    return out;
  }

  private void every(StringBuilder sb) {
    sb.append("## Every window\n\n");
    sb.append("Node CPU includes its JIT compilers' (shown apart). *After* is the node CPU spent after a write "
        + "window until it idled (flushes, compactions), per value written, not counted in the ratio. Client CPU is "
        + "the bench process's, which drives one node at a time.\n\n");
    sb.append("| round | workload | window | node | values/s | p50 ms | p99 ms | node CPU µs/value | of it JIT, ms | "
        + "after, µs/value | client CPU µs/value |\n|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Window m : windows) {
      sb.append(String.format(Locale.ROOT, "| %d | %s | %s | %s | %,.0f | %.2f | %.2f | %.2f | %.0f | %s | %.2f |%n",
          m.round() + 1, m.workload().label(), m.paced() ? "paced" : "full speed", m.secure() ? "secured" : "plain",
          m.result().valuesPerSecond(), m.result().latencyMs(0.5), m.result().latencyMs(0.99), m.nodeMicrosPerValue(),
          m.jitNanos() / 1e6, m.workload().isWrite() ? String.format(Locale.ROOT, "%.2f", m.afterMicrosPerValue())
              : "", m.clientMicrosPerValue()));
    }
    sb.append('\n');
  }

  private Window find(int round, SecurityWorkload w, boolean secure, boolean paced) {
    for (Window m : windows) {
      if (m.round() == round && m.workload() == w && m.secure() == secure && m.paced() == paced) {
        return m;
      }
    }
    return null;
  }

  private double median(SecurityWorkload w, boolean secure, boolean paced, ToDoubleFunction<Window> f) {
    List<Double> xs = new ArrayList<>();
    for (Window m : windows) {
      if (m.workload() == w && m.secure() == secure && m.paced() == paced) {
        xs.add(f.applyAsDouble(m));
      }
    }
    return xs.isEmpty() ? Double.NaN : median(xs);
  }

  private static double median(List<Double> xs) {
    if (xs.isEmpty()) {
      return Double.NaN;
    }
    List<Double> sorted = new ArrayList<>(xs);
    sorted.sort(Double::compare);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
