package io.tabula.multijvm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What each step of the nemesis schedule cost as a client sees it: for each step and each
 * register row (one per range, so one per tablet that holds one), the longest gap between two
 * successful reads of that row by a client bound to one node that was not the step's faulty
 * node, over the step's window (from the step's start until the cluster was healthy again;
 * the gap that straddles either end counts). Which tablet held the row at the end of the gap
 * comes from the tablet map, sampled every second.
 *
 * <p>A figure, not a verdict (speed belongs to bench/): printed as a table per kind of step.
 * Thread-safe: one thread samples while the scenario runs.
 */
final class NemesisGaps {
  /** The tablet map at one moment: {id, start, end, owner, state} in row order, bounds as rows (null: open). */
  private record Sample(long at, List<String[]> tablets) {}

  private final List<Sample> samples = new CopyOnWriteArrayList<>();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private Thread sampler;

  /** Samples {@code cluster}'s tablet map of table t every second, through a healthy node, until {@link #stop}. */
  void start(NemesisCluster cluster) {
    sampler = new Thread(() -> {
      while (running.get()) {
        List<NemesisCluster.Life> healthy = cluster.healthy();
        if (!healthy.isEmpty()) {
          try {
            samples.add(new Sample(System.nanoTime(), tablets(healthy.get(0).jvm())));
          } catch (IOException notNow) {
            // that node did not answer; the next second's sample will do
          } catch (InterruptedException e) {
            return;
          }
        }
        try {
          Thread.sleep(1_000);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "tablet-sampler");
    sampler.setDaemon(true);
    sampler.start();
  }

  void stop() throws InterruptedException {
    running.set(false);
    if (sampler != null) {
      sampler.join(15_000);
    }
  }

  /** {id, start, end, owner, state} of table t's tablets as {@code via} shows them, bounds as rows (null: open). */
  static List<String[]> tablets(NodeJvm via) throws IOException, InterruptedException {
    Map<String, String[]> owners = ClusterFixture.tablets(via, "t");
    List<String[]> out = new ArrayList<>();
    for (String[] r : ClusterFixture.ranges(via, "t")) {
      String[] o = owners.get(r[0]);
      out.add(new String[] {r[0], row(r[1]), row(r[2]), o == null ? "?" : o[0], o == null ? "?" : o[1]});
    }
    return out;
  }

  /** A bound as the node shows it in JSON (a quoted string, escaped; 0x and hex; null) as a row; null if open. */
  static String row(String shown) {
    if (shown.equals("null")) {
      return null;
    }
    if (shown.startsWith("0x")) {
      return new String(HexFormat.of().parseHex(shown.substring(2)), java.nio.charset.StandardCharsets.ISO_8859_1);
    }
    String s = shown.replace("\\\"", "\"").replace("\\\\", "\\");
    s = s.substring(1, s.length() - 1);
    return s.isEmpty() ? null : s;
  }

  /** Whether {@code row} lies in [start, end) (null start: from the first row; null end: to the last). */
  static boolean holds(String[] tablet, String row) {
    return (tablet[1] == null || tablet[1].compareTo(row) <= 0) && (tablet[2] == null || row.compareTo(tablet[2]) < 0);
  }

  /** The tablet that held {@code row} at {@code at} by the latest sample before it: "id on owner", or "?". */
  private String tabletAt(String row, long at) {
    Sample best = null;
    for (Sample s : samples) {
      if (s.at() <= at && (best == null || s.at() > best.at())) {
        best = s;
      }
    }
    if (best == null) {
      return "?";
    }
    for (String[] t : best.tablets()) {
      if (holds(t, row)) {
        return t[0] + " on " + t[3];
      }
    }
    return "?";
  }

  /**
   * The tables, one per kind of step: each step's number, what it did, when, its longest gap
   * and where (the register row, its tablet, and the node the client was bound to).
   */
  String tables(List<NemesisReport.StepWindow> windows, List<RegisterHistory.Op> ops, NemesisReport report) {
    // Successful reads through a node's client, by row and node name: answer times, sorted.
    Map<String, Map<String, long[]>> reads = new TreeMap<>();
    Map<String, Map<String, List<Long>>> lists = new TreeMap<>();
    for (RegisterHistory.Op op : ops) {
      if (!op.write() && op.via().matches("n\\d+#\\d+")) {
        String node = op.via().substring(0, op.via().indexOf('#'));
        lists.computeIfAbsent(op.row(), r -> new TreeMap<>()).computeIfAbsent(node, n -> new ArrayList<>())
            .add(op.answered());
      }
    }
    lists.forEach((row, byNode) -> byNode.forEach((node, times) -> {
      long[] a = times.stream().mapToLong(Long::longValue).toArray();
      Arrays.sort(a);
      reads.computeIfAbsent(row, r -> new TreeMap<>()).put(node, a);
    }));
    StringBuilder sb = new StringBuilder();
    for (NemesisSchedule.Kind kind : NemesisSchedule.Kind.values()) {
      List<NemesisReport.StepWindow> of = windows.stream().filter(w -> w.kind() == kind).toList();
      if (of.isEmpty()) {
        continue;
      }
      sb.append("\n").append(kind.label).append(":\n\n");
      sb.append("| step | at | longest gap (ms) | register row, its tablet then | client bound to | each row's (s) "
          + "| what |\n");
      sb.append("|---:|---:|---:|---|---|---|---|\n");
      for (NemesisReport.StepWindow w : of) {
        long worst = -1;
        String where = "-";
        String via = "-";
        StringBuilder each = new StringBuilder();
        for (Map.Entry<String, Map<String, long[]>> r : reads.entrySet()) {
          long rowWorst = -1;
          for (Map.Entry<String, long[]> n : r.getValue().entrySet()) {
            if (n.getKey().equals(w.faulty())) {
              continue;
            }
            long[] gap = longestGap(n.getValue(), w.start(), w.end());
            rowWorst = Math.max(rowWorst, gap == null ? -1 : gap[1] - gap[0]);
            if (gap != null && gap[1] - gap[0] > worst) {
              worst = gap[1] - gap[0];
              where = r.getKey() + " in " + tabletAt(r.getKey(), gap[1]);
              via = n.getKey();
            }
          }
          each.append(each.length() == 0 ? "" : " ").append(r.getKey().replace(NemesisLoad.REGISTER, ""))
              .append(':').append(rowWorst < 0 ? "-" : String.format("%.1f", rowWorst / 1e9));
        }
        sb.append(String.format("| %d | %s | %s | %s | %s | %s | %s |%n", w.number(), report.at(w.start()),
            worst < 0 ? "-" : Long.toString(NemesisReport.ms(worst)), where, via, each, w.line().replace("|", "/")));
      }
    }
    return sb.toString();
  }

  /**
   * The longest gap {from, to} between consecutive times in sorted {@code t} that overlaps
   * [start, end]; a gap still open at {@code end} (no read after it) counts up to {@code end}.
   * Null if there is no time at all.
   */
  static long[] longestGap(long[] t, long start, long end) {
    int i = Arrays.binarySearch(t, start);
    i = i < 0 ? -i - 2 : i; // the last time at or before start
    i = Math.max(i, 0);
    long[] best = null;
    for (; i + 1 < t.length && t[i] <= end; i++) {
      if (t[i + 1] >= start && (best == null || t[i + 1] - t[i] > best[1] - best[0])) {
        best = new long[] {t[i], t[i + 1]};
      }
    }
    if (t.length > 0 && t[t.length - 1] < end && (best == null || end - t[t.length - 1] > best[1] - best[0])) {
      best = new long[] {t[t.length - 1], end};
    }
    return best;
  }
}
