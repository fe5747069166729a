package io.tabula.streams.filter;

import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * The {@link CompiledFilter} behind {@link RowFilters#compile}: a validated node tree and the
 * random source for row sampling. Thread-safe if the random source is.
 */
final class CompiledTree implements CompiledFilter {
  private final FilterNode root;
  private final DoubleSupplier random;

  CompiledTree(FilterNode root, DoubleSupplier random) {
    this.root = root;
    this.random = random;
  }

  @Override
  public FilteredRow apply(Row row) {
    List<LabeledCell> in = new ArrayList<>(row.cells().size());
    for (Cell c : row.cells()) {
      in.add(LabeledCell.of(c));
    }
    if (root == CompositeNodes.PassAll.INSTANCE) {
      return new FilteredRow(row.key(), in);
    }
    Evaluation ev = new Evaluation(row.key(), random);
    return new FilteredRow(row.key(), ev.result(root.apply(ev, in)));
  }
}
