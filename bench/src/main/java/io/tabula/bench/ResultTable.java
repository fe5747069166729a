package io.tabula.bench;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The results of a run: one line per workload with each engine's throughput, the ratio
 * Tabula/RocksDB (above 1 means Tabula was faster), MB/s of keys and values, and the
 * block-cache hit rate in the timed window. Renders as aligned text for the terminal and as
 * Markdown for the README. Not thread-safe.
 */
final class ResultTable {
  private record Line(Workload workload, Map<EngineKind, Measurement> results) {}

  private static final String[] HEADER = {"Workload", "Tabula ops/s", "RocksDB ops/s", "Tabula/RocksDB",
      "Tabula MB/s", "RocksDB MB/s", "Tabula cache hits", "RocksDB cache hits"};

  private final List<Line> lines = new ArrayList<>();

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

  /** The ratio Tabula/RocksDB of ops/s for a workload, or NaN if either is missing. */
  double ratio(Workload w) {
    for (Line l : lines) {
      if (l.workload == w) {
        return ratio(l);
      }
    }
    return Double.NaN;
  }

  private static double ratio(Line l) {
    Measurement t = l.results.get(EngineKind.TABULA);
    Measurement r = l.results.get(EngineKind.ROCKSDB);
    return t == null || r == null ? Double.NaN : t.opsPerSecond() / r.opsPerSecond();
  }

  private List<String[]> cells() {
    List<String[]> rows = new ArrayList<>();
    for (Line l : lines) {
      Measurement t = l.results.get(EngineKind.TABULA);
      Measurement r = l.results.get(EngineKind.ROCKSDB);
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
    int[] width = new int[HEADER.length];
    for (int c = 0; c < HEADER.length; c++) {
      width[c] = HEADER[c].length();
      for (String[] row : rows) {
        width[c] = Math.max(width[c], row[c].length());
      }
    }
    StringBuilder b = new StringBuilder();
    appendText(b, HEADER, width);
    int total = (HEADER.length - 1) * 3;
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

  /** A GitHub Markdown table. */
  String toMarkdown() {
    StringBuilder b = new StringBuilder();
    b.append("| ").append(String.join(" | ", HEADER)).append(" |\n");
    b.append("|---").append("|---:".repeat(HEADER.length - 1)).append("|\n");
    for (String[] row : cells()) {
      b.append("| ").append(String.join(" | ", row)).append(" |\n");
    }
    return b.toString();
  }
}
