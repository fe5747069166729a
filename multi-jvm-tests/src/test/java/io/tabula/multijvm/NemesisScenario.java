package io.tabula.multijvm;

import io.tabula.multijvm.NemesisCluster.Life;
import io.tabula.multijvm.NemesisCluster.Unavailable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The nemesis scenario's body ({@link NemesisTest}): four nodes on one root, the load through
 * every node ({@link NemesisLoad}), a seeded schedule of faults and changes ({@link
 * NemesisSchedule}, run by {@link NemesisFaults}) until the given minutes have passed since the
 * first node started, then the checks:
 * <ol>
 *   <li>the cluster is healthy again within {@link NemesisCluster#SETTLE};
 *   <li>every register row's history is linearizable ({@link RegisterHistory}), after a last
 *       read of every register row through every node;
 *   <li>a full read-back holds every acknowledged write, once, in order, and nothing never written;
 *   <li>every tablet serves, and every node lists the same tablets;
 *   <li>the tablets' row ranges cover the key space once (no gap, no overlap).
 * </ol>
 * Each violation is printed at once with the seed, the schedule up to it and the operations
 * around it (times relative to the schedule's origin); {@link #run} then fails naming them all.
 * The unavailability each step cost ({@link NemesisGaps}) is printed as tables, not checked.
 */
final class NemesisScenario implements AutoCloseable {
  /**
   * Small tablets that split past 512 KiB, tablets that merge once together under 128 KiB and
   * cold (fewer than one operation a second) for 3 s, splits by load past 300 rows/s for 2 s,
   * balancing every 2 s, and the master's sweep of unreferenced SSTables every 5 s with a 20 s grace.
   */
  static final String CONFIG = """
      tabula.tablet.split-bytes = 512KiB
      tabula.tablet.check-interval = 500ms
      tabula.master.balance-every = 2s
      tabula.master.moved-tablet-stays = 5s
      tabula.master.merge.below-bytes = 128KiB
      tabula.master.merge.cold-for = 3s
      tabula.master.hot-split { for = 2s, min-ops-per-second = 300 }
      tabula.master.sweep-files-every = 5s
      tabula.master.sweep-files-grace = 20s
      """;

  private final NemesisReport report;
  private final NemesisCluster cluster;
  private final NemesisLoad load;
  private final NemesisGaps gaps = new NemesisGaps();
  private final List<String> checks = new ArrayList<>();

  NemesisScenario(ClusterFixture fixture, long seed, int minutes) throws IOException {
    this.report = new NemesisReport(seed, minutes, System.nanoTime());
    this.cluster = new NemesisCluster(fixture, report, CONFIG);
    this.load = new NemesisLoad(cluster, report);
  }

  NemesisReport report() {
    return report;
  }

  /** Runs the scenario; throws an {@link AssertionError} naming every violation found. */
  void run() throws IOException, InterruptedException {
    long until = report.origin() + TimeUnit.MINUTES.toNanos(report.minutes);
    int steps = 0;
    try {
      for (String name : NemesisCluster.NAMES) {
        cluster.start(name, false);
      }
      load.create(cluster.healthy().get(0));
      cluster.onStart(load::startThrough);
      cluster.healthy().forEach(load::startThrough);
      load.startTabula();
      gaps.start(cluster);
      cluster.awaitHealthy(NemesisCluster.SETTLE);
      report.event("four nodes serve table t under load; the schedule begins");
      Thread.sleep(3_000);
      NemesisSchedule schedule = new NemesisSchedule(report.seed, NemesisCluster.NAMES);
      NemesisFaults faults = new NemesisFaults(cluster, load, report);
      while (System.nanoTime() < until) {
        report.window(faults.run(schedule.next()));
        steps++;
      }
      report.event("the schedule is over after " + steps + " steps");
      cluster.awaitHealthy(NemesisCluster.SETTLE);
    } catch (Unavailable e) {
      report.violation("unavailable beyond its bound at step " + (steps + 1) + ": " + e.getMessage(), System.nanoTime(),
          System.nanoTime(), "");
    }
    Thread.sleep(3_000);
    load.stop();
    gaps.stop();
    check();
    String tables = gaps.tables(report.windows(), load.registers().ops(), report);
    System.out.println("client-visible unavailability per step (longest gap between successful reads of a register "
        + "row through one node not faulty then):" + tables);
    checks.forEach(c -> System.out.println("check: " + c));
    String out = System.getProperty("tabula.nemesis.report", "");
    if (!out.isEmpty()) {
      report.write(Path.of(out), tables, checks);
      System.out.println("report written to " + out);
    }
    List<NemesisReport.Violation> found = report.violations();
    if (!found.isEmpty()) {
      StringBuilder sb = new StringBuilder(found.size() + " violations (seed " + report.seed + "; replay with "
          + report.replay() + "), each printed above with the schedule and the operations around it:");
      found.forEach(v -> sb.append("\n  ").append(v.what().lines().findFirst().orElse("")));
      throw new AssertionError(sb.toString());
    }
  }

  /** The checks once the load has stopped; each violation goes to the report. */
  private void check() throws IOException, InterruptedException {
    List<Life> healthy = cluster.healthy();
    if (healthy.isEmpty()) {
      report.violation("no node is left to check through", System.nanoTime(), System.nanoTime(), "");
      return;
    }
    load.finalReads(healthy);
    RegisterHistory registers = load.registers();
    List<RegisterHistory.Violation> bad = registers.violations(report::at);
    for (RegisterHistory.Violation v : bad) {
      long from = Math.max(v.from, report.origin());
      long to = Math.max(v.to, from);
      report.violation(v.getMessage(), from, to, around(registers, v.row, from, to));
    }
    checks.add("register histories: " + (bad.isEmpty() ? "every row linearizable" : bad.size() + " rows not "
        + "linearizable") + " (" + registers.size() + " operations)");
    checks.add(load.verify(healthy.get(0)));
    checkTablets(healthy);
  }

  /**
   * Row {@code row}'s operations within 3 s of {@code from} and of {@code to} (the span of a
   * violation), repeated reads of one value through one client folded.
   */
  private String around(RegisterHistory registers, String row, long from, long to) {
    long margin = TimeUnit.SECONDS.toNanos(3);
    if (to - from <= 2 * margin) {
      return "row " + row + " from " + report.at(from - margin) + " to " + report.at(to + margin) + ":\n"
          + registers.rowHistory(row, from - margin, to + margin, report::at);
    }
    return "row " + row + " from " + report.at(from - margin) + " to " + report.at(from + margin) + ":\n"
        + registers.rowHistory(row, from - margin, from + margin, report::at)
        + "row " + row + " from " + report.at(to - margin) + " to " + report.at(to + margin) + ":\n"
        + registers.rowHistory(row, to - margin, to + margin, report::at);
  }

  /** Every tablet serving on a node of the cluster, every node listing the same ones, their ranges covering the keys once. */
  private void checkTablets(List<Life> healthy) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    Map<String, String> views = new TreeMap<>();
    while (true) {
      views.clear();
      boolean serving = true;
      for (Life l : healthy) {
        StringBuilder sb = new StringBuilder();
        try {
          for (Map.Entry<String, String[]> t : ClusterFixture.tablets(l.jvm(), "t").entrySet()) {
            sb.append(t.getKey()).append('=').append(t.getValue()[0]).append('/').append(t.getValue()[1]).append(' ');
            serving &= t.getValue()[1].equals("serving") && NemesisCluster.NAMES.contains(t.getValue()[0]);
          }
        } catch (IOException e) {
          sb.append("(did not answer: ").append(e).append(')');
          serving = false;
        }
        views.put(l.label(), sb.toString());
      }
      if (serving && views.values().stream().distinct().count() == 1) {
        break;
      }
      if (System.nanoTime() > deadline) {
        report.violation("30 s after the load stopped the nodes do not all list the same tablets, each serving: "
            + views, System.nanoTime(), System.nanoTime(), "");
        return;
      }
      Thread.sleep(500);
    }
    List<String[]> ranges = ClusterFixture.ranges(healthy.get(0).jvm(), "t");
    try {
      MasterDeathTest.assertCoverOnce(ranges);
      checks.add("tablets: " + ranges.size() + ", each serving, the same on every node, their ranges covering the "
          + "key space once");
    } catch (AssertionError e) {
      report.violation("the tablets' ranges do not cover the key space once: " + e.getMessage(), System.nanoTime(),
          System.nanoTime(), "");
    }
  }

  /** Stops the load and every node process (also after a failure or a timeout). */
  @Override
  public void close() throws InterruptedException {
    try {
      cluster.close();
    } finally {
      load.stop();
      gaps.stop();
    }
  }
}
