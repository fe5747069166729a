package io.tabula.streams.filter;

import io.tabula.persistence.model.Row;
import java.util.function.DoubleSupplier;

/**
 * The {@link CompiledFilter} behind {@link RowFilters#compile} for every filter but the one that
 * passes all cells: a validated node tree and the random source for row sampling. Thread-safe if
 * the random source is.
 */
final class CompiledTree implements CompiledFilter {
  private final FilterNode root;
  private final DoubleSupplier random;
  private final long regexInstructions;

  CompiledTree(FilterNode root, DoubleSupplier random, long regexInstructions) {
    this.root = root;
    this.random = random;
    this.regexInstructions = regexInstructions;
  }

  @Override
  public long regexInstructions() {
    return regexInstructions;
  }

  @Override
  public FilteredRow apply(Row row) {
    // The nodes never modify their input, so the unfiltered row's immutable list serves as it.
    FilteredRow in = FilteredRow.unfiltered(row);
    Evaluation ev = new Evaluation(row.key(), random);
    return new FilteredRow(row.key(), ev.result(root.apply(ev, in.cells())));
  }
}
