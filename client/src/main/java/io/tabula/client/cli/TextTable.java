package io.tabula.client.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** Rows printed as columns two spaces apart, under a header underlined with dashes, as cbt prints them. */
final class TextTable {
  private TextTable() {}

  /** Each column as wide as its widest cell (the last one unpadded); no line ends in spaces. */
  static void print(PrintWriter out, List<String> header, List<List<String>> rows) {
    int[] width = new int[header.size()];
    List<List<String>> lines = new ArrayList<>();
    lines.add(header);
    lines.add(header.stream().map(h -> "-".repeat(h.length())).toList());
    lines.addAll(rows);
    for (List<String> line : lines) {
      for (int i = 0; i < width.length - 1; i++) {
        width[i] = Math.max(width[i], line.get(i).length());
      }
    }
    for (List<String> line : lines) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < width.length; i++) {
        b.append(i == 0 ? "" : "  ").append(line.get(i)).append(" ".repeat(Math.max(0, width[i]
            - line.get(i).length())));
      }
      out.println(b.toString().stripTrailing());
    }
  }
}
