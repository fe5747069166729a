package io.tabula.streams.filter;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Row;
import java.util.Arrays;
import java.util.List;

/**
 * The output of a {@link CompiledFilter} for one row: its key and the cells that passed, in row
 * order (family, qualifier as unsigned bytes, timestamp descending). Unlike an engine
 * {@code Row}, it may be empty, which means the caller omits the row; and it may hold the same
 * cell more than once, as an interleave or a sink can produce, each copy with its own labels.
 * Immutable; callers must not modify the key.
 */
public record FilteredRow(byte[] key, List<LabeledCell> cells) {
  public FilteredRow {
    cells = List.copyOf(cells);
  }

  /**
   * {@code row} with every cell passed and unlabeled: what a filter that passes all cells
   * outputs. The cells go through an immutable list, which the constructor keeps as it is.
   */
  public static FilteredRow unfiltered(Row row) {
    List<Cell> cells = row.cells();
    LabeledCell[] labeled = new LabeledCell[cells.size()];
    for (int i = 0; i < labeled.length; i++) {
      labeled[i] = LabeledCell.of(cells.get(i));
    }
    return new FilteredRow(row.key(), List.of(labeled));
  }

  /** About how many bytes the row takes in a response or a message: key, qualifiers, values and a little per cell. */
  public long approximateBytes() {
    long n = key.length;
    for (LabeledCell c : cells) {
      n += c.qualifier().length + c.value().length + 16;
    }
    return n;
  }

  /** True if no cell passed: the row is not returned. */
  public boolean isEmpty() {
    return cells.isEmpty();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FilteredRow r && Arrays.equals(key, r.key) && cells.equals(r.cells);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(key) * 31 + cells.hashCode();
  }

  @Override
  public String toString() {
    return ByteArrays.show(key) + cells;
  }
}
