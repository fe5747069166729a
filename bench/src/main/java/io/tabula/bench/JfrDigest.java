package io.tabula.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a process's time went in given windows of a flight recording (the JDK's own reader):
 * what its Java threads ran (execution samples, by the code they were in and by thread), its
 * garbage collections' pauses, its file syncs ({@code jdk.FileForce}, complete when the
 * recording's threshold for it is 0) and its JIT compilations. A benchmark's aid, never a test.
 *
 * <p>A sample is put down to its <em>layer</em>: the package (three names deep) of the innermost
 * frame outside the JDK, so that an array copy in the memtable counts as the engine's
 * ({@code io.tabula.persistence}), not the JDK's.
 */
public final class JfrDigest {
  /** A stretch of the recording to digest, named. */
  public record Window(String name, Instant start, Instant end) {}

  /** What one window holds. */
  public static final class Digest {
    final Window window;
    long samples;
    final Map<String, Long> byLayer = new HashMap<>();
    /** Core-seconds (user and system) in the window by thread group, from the threads' CPU load events. */
    final Map<String, Double> threadCpu = new HashMap<>();
    /** Core-seconds in the window of the process and of the machine, and the seconds of the window they cover. */
    double processCpu;
    double machineCpu;
    double loadSeconds;
    final Map<String, Long> byMethod = new HashMap<>();
    int gcs;
    double gcPauseMillis;
    double longestPauseMillis;
    final List<Double> syncMillis = new ArrayList<>();
    /** Milliseconds spent in file syncs, by thread group. */
    final Map<String, Double> syncMillisByThread = new HashMap<>();
    int compilations;
    double compileMillis;

    Digest(Window window) {
      this.window = window;
    }

    public Window window() {
      return window;
    }

    /** The recorded file syncs' durations in ms, sorted. */
    public double[] syncs() {
      return syncMillis.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    }

    /** One Markdown table row: window, samples, layers, threads, hottest methods, GC, syncs, JIT. */
    public String row() {
      double[] s = syncs();
      String syncText = s.length == 0 ? "–" : String.format(Locale.ROOT, "%,d: p50 %.2f, p99 %.1f, max %.1f; %s",
          s.length, quantile(s, 0.5), quantile(s, 0.99), s[s.length - 1], syncTimeByThread());
      return String.format(Locale.ROOT, "| %s | %,d | %s | %s | %s | %d / %.0f / %.0f | %s | %d / %.0f |",
          window.name(), samples, top(byLayer, 5), threads(), top(byMethod, 4), gcs, gcPauseMillis,
          longestPauseMillis, syncText, compilations, compileMillis);
    }

    /** The syncs' summed time, in ms, of the threads that spent the most in them. */
    String syncTimeByThread() {
      return largest(syncMillisByThread, 3, v -> String.format(Locale.ROOT, "%,.0f", v));
    }

    /** The process's and the machine's cores in use, and the busiest Java threads' share of a core. */
    private String threads() {
      if (loadSeconds == 0) {
        return "–";
      }
      String busiest = largest(threadCpu, 4, v -> String.format(Locale.ROOT, "%.2f", v / loadSeconds));
      return String.format(Locale.ROOT, "process %.2f, machine %.2f; %s", processCpu / loadSeconds,
          machineCpu / loadSeconds,
          busiest);
    }

    private String top(Map<String, Long> counts, int n) {
      if (samples == 0) {
        return "–";
      }
      return largest(counts, n, v -> String.format(Locale.ROOT, "%.0f%%", 100.0 * v.doubleValue() / samples));
    }

    /** The {@code n} largest entries of {@code values}, largest first: "key value, key value". */
    private static <V extends Comparable<V>> String largest(Map<String, V> values, int n,
        java.util.function.Function<V, String> format) {
      return values.entrySet().stream().sorted(Map.Entry.<String, V>comparingByValue().reversed()).limit(n)
          .map(e -> e.getKey() + " " + format.apply(e.getValue())).collect(Collectors.joining(", "));
    }
  }

  /** The header of the table {@link Digest#row()} rows belong to. */
  public static final String HEADER = "| window | CPU samples | by code (innermost frame outside the JDK) | cores in "
      + "use: process, machine; busiest threads | hottest methods (own time) | GC pauses: n / total ms / longest ms | file syncs, ms; time in them by thread, ms | JIT compilations: "
      + "n / ms |\n|---|---:|---|---|---|---:|---|---:|\n";

  /** How often threads' and the process's CPU load are recorded. */
  private static final Duration LOAD_PERIOD = Duration.ofSeconds(1);
  /** The cores of this machine: a recording digested here is one made here (a node beside its bench). */
  private static final int CORES = Runtime.getRuntime().availableProcessors();

  private JfrDigest() {}

  /** Digests {@code recording} for each of {@code windows}, in their order; an event counts in every window it starts in. */
  public static List<Digest> digest(Path recording, List<Window> windows) throws IOException {
    List<Digest> out = windows.stream().map(Digest::new).toList();
    if (out.isEmpty()) {
      return out;
    }
    try (RecordingFile file = new RecordingFile(recording)) {
      while (file.hasMoreEvents()) {
        RecordedEvent e = file.readEvent();
        String type = e.getEventType().getName();
        Instant at = e.getStartTime();
        boolean load = type.equals("jdk.ThreadCPULoad") || type.equals("jdk.CPULoad");
        for (Digest d : out) {
          if (load) {
            addLoad(d, type, e, at);
          } else if (!at.isBefore(d.window.start()) && at.isBefore(d.window.end())) {
            add(d, type, e);
          }
        }
      }
    }
    return out;
  }

  /**
   * A CPU load event: a share of the whole machine over the period before it. Credits the part
   * of that period inside the window, in core-seconds, so that a window of a second or two
   * counts neither a whole period too many nor too few.
   */
  private static void addLoad(Digest d, String type, RecordedEvent e, Instant at) {
    Instant from = at.minus(LOAD_PERIOD);
    Instant overlapStart = from.isAfter(d.window.start()) ? from : d.window.start();
    Instant overlapEnd = at.isBefore(d.window.end()) ? at : d.window.end();
    double seconds = Duration.between(overlapStart, overlapEnd).toNanos() / 1e9;
    if (seconds <= 0) {
      return;
    }
    if (type.equals("jdk.ThreadCPULoad")) {
      double share = e.getFloat("user") + e.getFloat("system");
      d.threadCpu.merge(threadGroup(e.getThread("eventThread")), share * CORES * seconds, Double::sum);
    } else {
      d.loadSeconds += seconds;
      d.processCpu += (e.getFloat("jvmUser") + e.getFloat("jvmSystem")) * CORES * seconds;
      d.machineCpu += e.getFloat("machineTotal") * CORES * seconds;
    }
  }

  private static void add(Digest d, String type, RecordedEvent e) {
    switch (type) {
      case "jdk.ExecutionSample" -> {
        d.samples++;
        RecordedStackTrace stack = e.getStackTrace();
        if (stack == null || stack.getFrames().isEmpty()) {
          d.byLayer.merge("(no stack)", 1L, Long::sum);
          return;
        }
        List<RecordedFrame> frames = stack.getFrames();
        d.byMethod.merge(method(frames.get(0)), 1L, Long::sum);
        d.byLayer.merge(layer(frames), 1L, Long::sum);
      }
      case "jdk.GarbageCollection" -> {
        d.gcs++;
        double pauses = millis(e.getDuration("sumOfPauses"));
        d.gcPauseMillis += pauses;
        d.longestPauseMillis = Math.max(d.longestPauseMillis, millis(e.getDuration("longestPause")));
      }
      case "jdk.FileForce" -> {
        d.syncMillis.add(millis(e.getDuration()));
        d.syncMillisByThread.merge(threadGroup(e.getThread()), millis(e.getDuration()), Double::sum);
      }
      case "jdk.Compilation" -> {
        d.compilations++;
        d.compileMillis += millis(e.getDuration());
      }
      default -> { }
    }
  }

  /** A thread's name without its numbers, so a pool's threads count together. */
  private static String threadGroup(jdk.jfr.consumer.RecordedThread thread) {
    String name = thread == null ? null : thread.getJavaName();
    return name == null ? "(unnamed)" : name.replaceAll("[-#]?\\d+$", "");
  }

  private static String method(RecordedFrame f) {
    String type = f.getMethod().getType().getName();
    return type.substring(type.lastIndexOf('.') + 1) + "." + f.getMethod().getName();
  }

  /** The package (at most three names deep) of the innermost frame outside the JDK and Scala's library. */
  static String layer(List<RecordedFrame> frames) {
    for (RecordedFrame f : frames) {
      String type = f.getMethod().getType().getName();
      if (!isRuntime(type)) {
        return packageOf(type, 3);
      }
    }
    return packageOf(frames.get(0).getMethod().getType().getName(), 2);
  }

  private static boolean isRuntime(String type) {
    return type.startsWith("java.") || type.startsWith("jdk.") || type.startsWith("sun.") || type.startsWith("scala.");
  }

  private static String packageOf(String type, int depth) {
    String[] parts = type.split("\\.");
    int n = Math.min(depth, Math.max(1, parts.length - 1));
    return String.join(".", Arrays.copyOf(parts, n));
  }

  private static double millis(Duration d) {
    return d == null ? 0 : d.toNanos() / 1e6;
  }

  private static double quantile(double[] sorted, double q) {
    return sorted[Math.min(sorted.length - 1, Math.max(0, (int) Math.ceil(q * sorted.length) - 1))];
  }

  /**
   * A Markdown section: {@code about} (what was recorded), then a table with a row for each
   * digest; empty when there is none.
   */
  public static String section(String about, List<Digest> digests) {
    if (digests.isEmpty()) {
      return "";
    }
    StringBuilder s = new StringBuilder();
    s.append("\n## Where the time went (flight recording)\n\n").append(about).append(" *CPU samples*: one per "
        + "Java thread running Java code every 10 ms (`profile` settings; a thread in the kernel or native code is "
        + "not sampled), by the code they were in (the package of the innermost frame outside the JDK) and by the "
        + "method they were in themselves. *Cores in use*: the process's and the whole machine's, on average over "
        + "the window (recorded every second), and the Java threads that used the most, user and system time, in "
        + "cores on average (the garbage collector's threads are not among them: they show in the process's "
        + "figure only; the JIT compilers' are). *File syncs*: every one, and the time the threads that synced the most spent in them (a thread's sync waits for the disk's queue, so a long one is often another thread's write). *JIT*: the compilations that started in the "
        + "window and their time (the compiler threads' CPU is among the busiest threads).\n\n");
    s.append(HEADER);
    digests.forEach(d -> s.append(d.row()).append('\n'));
    return s.toString();
  }

  /** Starts recording this JVM with the settings {@link #recorderOption} gives a process. */
  public static Recording startRecording() throws IOException {
    Recording r;
    try {
      r = new Recording(Configuration.getConfiguration("profile"));
    } catch (java.text.ParseException e) {
      throw new IOException("the JDK's profile settings do not parse", e);
    }
    r.enable("jdk.FileForce").withThreshold(Duration.ZERO);
    r.enable("jdk.Compilation").withThreshold(Duration.ZERO);
    r.enable("jdk.ThreadCPULoad").withPeriod(LOAD_PERIOD);
    r.enable("jdk.CPULoad").withPeriod(LOAD_PERIOD);
    r.start();
    return r;
  }

  /**
   * The flight recorder's options for a process to be digested: the {@code profile} settings
   * (a sample every 10 ms per running thread), with every file sync recorded.
   */
  public static String recorderOption(Path file) {
    return "-XX:StartFlightRecording=filename=" + file.toAbsolutePath() + ",dumponexit=true,settings=profile,"
        + "jdk.FileForce#threshold=0ms,jdk.Compilation#threshold=0ms,jdk.ThreadCPULoad#period=1s,jdk.CPULoad#period=1s";
  }
}
