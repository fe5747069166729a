package io.tabula.multijvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the nemesis scenario prints and keeps: every line of its timeline (each step of the
 * schedule as it is drawn, and what happened, with its time since the schedule's origin), the
 * steps' time windows, and the violations found. Times are the test process's {@code
 * System.nanoTime}; {@link #at} shows one relative to the origin, as "+12.345s".
 *
 * <p>Thread-safe: lines and violations may be added from the load's threads.
 */
final class NemesisReport {
  /** A step of the schedule as run: its number, kind, line, the node it made faulty ("" if none), and its window. */
  record StepWindow(int number, NemesisSchedule.Kind kind, String line, String faulty, long start, long end) {}

  /** A violation: what broke, when (the span of the operations in question), and what to show around it. */
  record Violation(String what, long from, long to, String around) {}

  final long seed;
  final int minutes;
  private final long origin;
  private final List<String> lines = new ArrayList<>();
  private final List<String> schedule = new ArrayList<>();
  private final List<Long> scheduleTimes = new ArrayList<>();
  private final List<StepWindow> windows = new ArrayList<>();
  private final List<Violation> violations = new ArrayList<>();

  NemesisReport(long seed, int minutes, long origin) {
    this.seed = seed;
    this.minutes = minutes;
    this.origin = origin;
  }

  long origin() {
    return origin;
  }

  /** {@code nanos} as seconds since the origin, "+12.345s". */
  String at(long nanos) {
    return String.format("+%.3fs", (nanos - origin) / 1e9);
  }

  /** How to run this schedule again. */
  String replay() {
    return "-Dtabula.seed=" + seed + " -Dtabula.nemesis.minutes=" + minutes;
  }

  /** Prints and keeps {@code text}, stamped with the time now. */
  synchronized void event(String text) {
    String line = String.format("[%9s] %s", at(System.nanoTime()), text);
    lines.add(line);
    System.out.println(line);
  }

  /** Prints and keeps a step of the schedule as it is drawn, stamped with the time now. */
  synchronized void step(String text) {
    long now = System.nanoTime();
    String line = String.format("[%9s] %s", at(now), text);
    schedule.add(line);
    scheduleTimes.add(now);
    lines.add(line);
    System.out.println(line);
  }

  /** Keeps the window of a finished step (for the unavailability tables). */
  synchronized void window(StepWindow w) {
    windows.add(w);
  }

  synchronized List<StepWindow> windows() {
    return new ArrayList<>(windows);
  }

  /** Records a violation and prints it at once, with the schedule up to it and what {@code around} shows. */
  synchronized void violation(String what, long from, long to, String around) {
    Violation v = new Violation(what, from, to, around);
    violations.add(v);
    System.out.println(show(v, violations.size()));
  }

  synchronized List<Violation> violations() {
    return new ArrayList<>(violations);
  }

  /** A violation as printed: the seed, the schedule up to it, the violation, the operations around it. */
  synchronized String show(Violation v, int number) {
    StringBuilder sb = new StringBuilder();
    sb.append("==== VIOLATION ").append(number).append(" (seed ").append(seed).append("; replay with ")
        .append(replay()).append(") ====\n").append(v.what()).append('\n');
    sb.append("-- the schedule up to it (its operations span [").append(at(v.from())).append(", ")
        .append(at(v.to())).append("]):\n");
    for (int i = 0; i < schedule.size(); i++) {
      if (scheduleTimes.get(i) <= v.to()) {
        sb.append(schedule.get(i)).append('\n');
      }
    }
    if (!v.around().isEmpty()) {
      sb.append("-- the operations around it:\n").append(v.around());
    }
    return sb.toString();
  }

  synchronized List<String> schedule() {
    return new ArrayList<>(schedule);
  }

  /** Writes the report (seed, schedule, timeline, unavailability tables, checks, violations) as Markdown. */
  synchronized void write(Path file, String gaps, List<String> checks) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append("# Nemesis run, seed ").append(seed).append("\n\n");
    sb.append("`bench/run-nemesis --minutes ").append(minutes).append(" --seed ").append(seed)
        .append("` (replay in the test: `").append(replay()).append("`), ")
        .append(Runtime.getRuntime().availableProcessors()).append(" cores. Times are seconds since the "
        + "scenario began (just before its first node started).\n\n");
    sb.append("## Schedule\n\n```\n");
    schedule.forEach(l -> sb.append(l).append('\n'));
    sb.append("```\n\n## Client-visible unavailability per fault\n\n").append(gaps).append('\n');
    sb.append("## Checks\n\n");
    checks.forEach(c -> sb.append("- ").append(c).append('\n'));
    sb.append("\n## Violations: ").append(violations.size()).append("\n\n");
    for (int i = 0; i < violations.size(); i++) {
      sb.append("```\n").append(show(violations.get(i), i + 1)).append("```\n\n");
    }
    sb.append("## Timeline\n\n```\n");
    lines.forEach(l -> sb.append(l).append('\n'));
    sb.append("```\n");
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, sb.toString());
  }

  static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
