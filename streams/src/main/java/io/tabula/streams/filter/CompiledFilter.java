package io.tabula.streams.filter;

import io.tabula.persistence.model.Row;

/**
 * A validated Cloud Bigtable {@code RowFilter}, ready to evaluate over engine rows. Obtain one
 * from {@link RowFilters#compile}.
 *
 * <p>Thread safety: immutable and safe to share between threads and streams, provided the
 * random source given to {@link RowFilters#compile(com.google.bigtable.v2.RowFilter, String,
 * java.util.function.DoubleSupplier)} is itself thread-safe (the default one is).
 */
public interface CompiledFilter {
  /**
   * The cells of {@code row} that pass the filter, in row order. Never throws for a well-formed
   * row (cells in engine order); an empty result means the row is omitted.
   */
  FilteredRow apply(Row row);

  /**
   * How many instructions the programs of the filter's regular expressions have together, at
   * most {@value RegexBudget#FILTER_INSTRUCTIONS}: what holding the compiled filter costs,
   * beyond its few objects (a cache weighs filters by it).
   */
  default long regexInstructions() {
    return 0;
  }
}
