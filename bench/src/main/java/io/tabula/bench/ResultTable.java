package io.tabula.bench;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The results of a run: one line per workload with the throughput of the two engines
 * compared (the first two of the run: Tabula and RocksDB by default, or Tabula on HDFS and
 * Tabula on local files), the ratio first/second (above 1 means the first was faster), MB/s
 * of keys and values, and the block-cache hit rate in the timed window. Renders as aligned
 * text for the terminal and as Markdown for the README. Not thread-safe.
 */
final class ResultTable {
  private record Line(Workload workload, Map<EngineKind, Measurement> results) {}

  private final List<Line> lines = new ArrayList<>();
  private final EngineKind first;
  private final EngineKind second;
  private final String[] header;

  /** A table comparing {@code first} with {@code second} (null: {@code first} alone). */
  ResultTable(EngineKind first, EngineKind second) {
    this.first = first;
    this.second = second;
    String a = first.label();
    String b = second == null ? "-" : second.label();
    this.header = new String[] {"Workload", a + " ops/s", b + " ops/s", a + "/" + b, a + " MB/s", b + " MB/s",
        a + " cache hits", b + " cache hits"};
  }

  void add(Workload w, EngineKind engine, Measurement m) {
    for (Line l : lines) {
      if (l.workload == w) {
        l.results.put(engine, m);
        return;
      }
    }
    Map<EngineKind, Measurement> results = new EnumMap<>(EngineKind.class);
    results.put(engine, m);
    lines.add(new Line(w, results));
  }

  /** "Tabula vs RocksDB": what the table compares. */
  String title() {
    return first.label() + (second == null ? "" : " vs " + second.label());
  }

  /** The ratio first/second of ops/s for a workload, or NaN if either is missing. */
  double ratio(Workload w) {
    for (Line l : lines) {
      if (l.workload == w) {
        return ratio(l);
      }
    }
    return Double.NaN;
  }

  private double ratio(Line l) {
    Measurement t = l.results.get(first);
    Measurement r = second == null ? null : l.results.get(second);
    return t == null || r == null ? Double.NaN : t.opsPerSecond() / r.opsPerSecond();
  }

  private List<String[]> cells() {
    List<String[]> rows = new ArrayList<>();
    for (Line l : lines) {
      Measurement t = l.results.get(first);
      Measurement r = second == null ? null : l.results.get(second);
      rows.add(new String[] {l.workload.label(), ops(t), ops(r), ratioText(ratio(l)), mb(t), mb(r),
          l.workload.isWrite() ? "-" : hits(t), l.workload.isWrite() ? "-" : hits(r)});
    }
    return rows;
  }

  private static String ops(Measurement m) {
    return m == null ? "-" : String.format(Locale.ROOT, "%,.0f", m.opsPerSecond());
  }

  private static String mb(Measurement m) {
    return m == null ? "-" : String.format(Locale.ROOT, "%,.1f", m.megabytesPerSecond());
  }

  private static String ratioText(double ratio) {
    return Double.isNaN(ratio) ? "-" : String.format(Locale.ROOT, "%.2f", ratio);
  }

  private static String hits(Measurement m) {
    if (m == null) {
      return "-";
    }
    double rate = m.cache().hitRate();
    return Double.isNaN(rate) ? "no lookups" : String.format(Locale.ROOT, "%.1f%%", rate * 100);
  }

  /** Aligned columns, numbers right-aligned. */
  String toText() {
    List<String[]> rows = cells();
    int[] width = new int[header.length];
    for (int c = 0; c < header.length; c++) {
      width[c] = header[c].length();
      for (String[] row : rows) {
        width[c] = Math.max(width[c], row[c].length());
      }
    }
    StringBuilder b = new StringBuilder();
    appendText(b, header, width);
    int total = (header.length - 1) * 3;
    for (int w : width) {
      total += w;
    }
    b.append("-".repeat(total)).append('\n');
    for (String[] row : rows) {
      appendText(b, row, width);
    }
    return b.toString();
  }

  private static void appendText(StringBuilder b, String[] row, int[] width) {
    for (int c = 0; c < row.length; c++) {
      if (c > 0) {
        b.append(" | ");
      }
      String pad = " ".repeat(width[c] - row[c].length());
      b.append(c == 0 ? row[c] + pad : pad + row[c]);
    }
    b.append('\n');
  }

  /**
   * Every engine's ops/s side by side, as a GitHub Markdown table, when the run had engines
   * beyond the two the main table compares; empty otherwise.
   */
  String everyEngineMarkdown() {
    List<EngineKind> all = lines.stream().flatMap(l -> l.results.keySet().stream()).distinct().sorted().toList();
    if (all.stream().allMatch(k -> k == first || k == second)) {
      return "";
    }
    StringBuilder b = new StringBuilder("| Workload |");
    all.forEach(k -> b.append(' ').append(k.label()).append(" ops/s |"));
    b.append("\n|---").append("|---:".repeat(all.size())).append("|\n");
    for (Line l : lines) {
      b.append("| ").append(l.workload.label()).append(" |");
      all.forEach(k -> b.append(' ').append(ops(l.results.get(k))).append(" |"));
      b.append('\n');
    }
    return b.toString();
  }

  /** A GitHub Markdown table. */
  String toMarkdown() {
    StringBuilder b = new StringBuilder();
    b.append("| ").append(String.join(" | ", header)).append(" |\n");
    b.append("|---").append("|---:".repeat(header.length - 1)).append("|\n");
    for (String[] row : cells()) {
      b.append("| ").append(String.join(" | ", row)).append(" |\n");
    }
    return b.toString();
  }
}
