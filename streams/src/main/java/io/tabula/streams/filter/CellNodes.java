package io.tabula.streams.filter;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.model.Cell;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The nodes that judge or transform cells: whole-row tests (key regex, sampling), per-cell
 * tests, the per-row and per-column counters, and the two transformers. Counters count each
 * copy of a duplicated cell separately, as Cloud Bigtable does.
 */
final class CellNodes {
  private CellNodes() {}

  /** {@code row_key_regex_filter}: all cells if the whole key matches, else none. */
  record RowKeyRegex(ByteRegex regex) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      return regex.matches(ev.rowKey()) ? in : List.of();
    }
  }

  /** {@code row_sample_filter}: all cells with probability {@code p}, else none. */
  record RowSample(double p) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      return ev.nextDouble() < p ? in : List.of();
    }
  }

  /** Every per-cell test: the family, qualifier, timestamp and value filters. */
  record Matching(Predicate<LabeledCell> test) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      List<LabeledCell> out = new ArrayList<>(in.size());
      for (LabeledCell c : in) {
        if (test.test(c)) {
          out.add(c);
        }
      }
      return out.size() == in.size() ? in : out;
    }
  }

  /** {@code cells_per_row_offset_filter}: drops the first {@code n} cells of the row. */
  record RowOffset(int n) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      return n >= in.size() ? List.of() : in.subList(n, in.size());
    }
  }

  /** {@code cells_per_row_limit_filter}: keeps the first {@code n} cells of the row. */
  record RowLimit(int n) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      return n >= in.size() ? in : in.subList(0, n);
    }
  }

  /** {@code cells_per_column_limit_filter}: keeps the first {@code n} cells of each column. */
  record ColumnLimit(int n) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      List<LabeledCell> out = new ArrayList<>(Math.min(in.size(), 16));
      LabeledCell columnStart = null;
      int seen = 0;
      for (LabeledCell c : in) {
        if (columnStart == null || !CellOrder.sameColumn(columnStart, c)) {
          columnStart = c;
          seen = 0;
        }
        if (seen++ < n) {
          out.add(c);
        }
      }
      return out.size() == in.size() ? in : out;
    }
  }

  /** {@code strip_value_transformer}: every value becomes empty; labels are kept. */
  enum StripValue implements FilterNode {
    INSTANCE;

    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      List<LabeledCell> out = new ArrayList<>(in.size());
      for (LabeledCell c : in) {
        Cell stripped = new Cell(c.family(), c.qualifier(), c.timestamp(), ByteArrays.EMPTY);
        out.add(new LabeledCell(stripped, c.labels()));
      }
      return out;
    }
  }

  /**
   * {@code apply_label_transformer}: adds {@code label} to every cell. Compilation lets at most
   * one label reach a cell, so the input cells normally have none and share {@link #only}.
   */
  record ApplyLabel(String label, List<String> only) implements FilterNode {
    ApplyLabel(String label) {
      this(label, List.of(label));
    }

    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      List<LabeledCell> out = new ArrayList<>(in.size());
      for (LabeledCell c : in) {
        out.add(new LabeledCell(c.cell(), c.labels().isEmpty() ? only : withLabel(c.labels())));
      }
      return out;
    }

    private List<String> withLabel(List<String> labels) {
      String[] all = labels.toArray(new String[labels.size() + 1]);
      all[labels.size()] = label;
      return List.of(all);
    }
  }
}
