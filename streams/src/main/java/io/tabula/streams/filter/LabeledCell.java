package io.tabula.streams.filter;

import io.tabula.persistence.model.Cell;
import java.util.List;

/**
 * A cell as a row filter outputs it: the engine cell, possibly with its value stripped, plus the
 * labels that {@code apply_label_transformer} filters attached on its way through. Immutable;
 * callers must not modify the cell's arrays.
 *
 * <p>Cloud Bigtable lets at most one label reach a cell (see {@link RowFilters}), so
 * {@code labels} has zero or one element for every filter that compiles; it stays a list
 * because the wire format's {@code labels} field is repeated.
 */
public record LabeledCell(Cell cell, List<String> labels) {
  public LabeledCell {
    labels = List.copyOf(labels);
  }

  /** The cell with no labels. */
  public static LabeledCell of(Cell cell) {
    return new LabeledCell(cell, List.of());
  }

  public String family() {
    return cell.family();
  }

  public byte[] qualifier() {
    return cell.qualifier();
  }

  public long timestamp() {
    return cell.timestamp();
  }

  public byte[] value() {
    return cell.value();
  }

  @Override
  public String toString() {
    return labels.isEmpty() ? cell.toString() : cell + labels.toString();
  }
}
