package io.tabula.streams.filter;

import com.google.bigtable.v2.RowFilter;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Compiles Cloud Bigtable v2 {@code RowFilter}s into {@link CompiledFilter}s that evaluate over
 * engine rows. Compilation validates the whole filter up front and throws
 * {@link InvalidFilterException} naming the first offending field; a compiled filter never
 * fails at evaluation.
 *
 * <h2>Semantics</h2>
 * A filter maps the cells of one row, in row order, to a list of cells in row order.
 * <ul>
 *   <li>{@code chain}: each sub-filter's output is the next one's input.
 *   <li>{@code interleave}: each sub-filter sees the input; the outputs are merged back into
 *       row order and duplicates are kept (a cell passed by two sub-filters appears twice, with
 *       whatever labels each copy got; ties keep sub-filter order).
 *   <li>{@code condition}: if the predicate outputs any cell, {@code true_filter} runs on the
 *       input, else {@code false_filter}; an absent branch outputs nothing. The predicate's
 *       cells, and labels applied inside it, never reach the output.
 *   <li>{@code sink}: its input goes straight to the final result, bypassing every enclosing
 *       filter; its parent receives nothing, so in a chain the filters after a sink see no
 *       cells, and in an interleave the sinking branch adds nothing to the merge. At top level
 *       it returns the whole row. The final result is the sunk cells merged with the main
 *       output in row order, duplicates kept.
 *   <li>{@code pass_all_filter}, {@code block_all_filter}, {@code strip_value_transformer}
 *       (value becomes empty, labels kept), {@code apply_label_transformer} (adds the label).
 *   <li>{@code row_key_regex_filter}, {@code family_name_regex_filter},
 *       {@code column_qualifier_regex_filter}, {@code value_regex_filter}: RE2 over raw bytes,
 *       full match (see {@link ByteRegex} for bytes, {@code \C} and non-ASCII patterns).
 *   <li>{@code row_sample_filter}: the whole row with probability p, drawn per evaluation from
 *       the random source (a draw below p passes).
 *   <li>{@code column_range_filter}: cells of {@code family_name} with the qualifier within the
 *       bounds; an unset start is "" inclusive, an unset end is unbounded. A set bound is taken
 *       literally, even when empty: {@code end_qualifier_open = ""} matches nothing. (The C++
 *       emulator reads an empty bound as unset; the documentation says only unset bounds are
 *       defaults, and that is followed here.) {@code value_range_filter} likewise, over values.
 *   <li>{@code timestamp_range_filter}: start inclusive, end exclusive, end 0 means no bound.
 *       Table granularity (milliseconds) is not checked here.
 *   <li>{@code value_bitmask_filter}: values as long as the mask with
 *       {@code (value & mask) == mask}.
 *   <li>{@code cells_per_row_offset_filter} / {@code cells_per_row_limit_filter}: skip / keep
 *       the first N cells of the row; {@code cells_per_column_limit_filter}: keep the first N
 *       cells (the newest versions) of each column. All count duplicate copies separately.
 * </ul>
 *
 * <h2>Rejections (field path, then problem)</h2>
 * A top-level filter with no kind set passes every cell. Everything below is rejected, with the
 * path built from the root field name ({@code filter} unless given), e.g.
 * {@code filter.chain.filters[1].column_qualifier_regex_filter}:
 * <ol>
 *   <li>a nested filter with no kind set (as the C++ emulator does; the Go emulator lets it
 *       pass all cells), or a kind or field this proto version does not know (unknown fields
 *       on any filter message are refused, never ignored);
 *   <li>a chain or interleave with fewer than two filters (Cloud Bigtable rejects these; the
 *       Go emulator matches it);
 *   <li>{@code sink}, {@code pass_all_filter}, {@code block_all_filter},
 *       {@code strip_value_transformer} set to false;
 *   <li>a {@code sink} anywhere inside a condition (documented as not allowed; the C++
 *       emulator accepts it);
 *   <li>a condition without {@code predicate_filter};
 *   <li>a chain with more than one sub-filter whose output may carry a label (a label inside a
 *       condition's predicate does not count, since it never reaches the output);
 *   <li>a label that is empty, longer than 15 characters or not {@code [a-z0-9\-]+} (the Go
 *       emulator checks this with an unanchored pattern; the documented rule is applied whole);
 *   <li>an invalid RE2 pattern; a family regex containing {@code ':'};
 *   <li>{@code row_sample_filter} not strictly between 0 and 1 (or NaN);
 *   <li>negative offsets or limits; negative timestamps; a timestamp range starting after its
 *       non-zero end; a column or value range starting after its end; an empty
 *       {@code column_range_filter.family_name}; an empty {@code value_bitmask_filter.mask};
 *   <li>nesting deeper than 20 composite filters, or a filter over 20480 bytes serialized;
 *   <li>regular expressions whose programs would be too large (see {@link RegexBudget}): more
 *       than 50,000 instructions for all of one filter's patterns together, counted
 *       repetitions nested so that their counts multiply to more than 1000 (RE2's rule), or
 *       groups nested more than 1000 deep.
 * </ol>
 * Regexes use full-match semantics as the documentation states, although the C++ emulator uses
 * partial matching.
 *
 * <p>Thread safety: stateless; compiled filters are immutable (see {@link CompiledFilter}).
 */
public final class RowFilters {
  private static final DoubleSupplier THREAD_LOCAL_RANDOM = () -> ThreadLocalRandom.current().nextDouble();

  /** The compiled form of a filter that passes every cell: no tree to walk, no random draws. */
  private static final CompiledFilter PASS_ALL = FilteredRow::unfiltered;

  private RowFilters() {}

  /**
   * Compiles the {@code filter} field of a read request, sampling rows with
   * {@link ThreadLocalRandom}.
   *
   * @throws InvalidFilterException if any part of {@code filter} is invalid
   */
  public static CompiledFilter compile(RowFilter filter) {
    return compile(filter, "filter");
  }

  /**
   * Compiles {@code filter}, naming it {@code field} in errors (e.g. {@code predicate_filter}
   * for a check-and-mutate request), sampling rows with the {@link ThreadLocalRandom} of
   * whichever thread evaluates the filter, so the result may be shared between threads.
   *
   * @throws InvalidFilterException if any part of {@code filter} is invalid
   */
  public static CompiledFilter compile(RowFilter filter, String field) {
    return compile(filter, field, THREAD_LOCAL_RANDOM);
  }

  /**
   * Compiles {@code filter}, naming it {@code field} in errors (e.g. {@code predicate_filter}
   * for a check-and-mutate request) and drawing row samples from {@code random}, which must
   * return values in [0, 1) and be thread-safe if the compiled filter is shared.
   *
   * @throws InvalidFilterException if any part of {@code filter} is invalid
   */
  public static CompiledFilter compile(RowFilter filter, String field, DoubleSupplier random) {
    RegexBudget budget = RegexBudget.forOneFilter();
    FilterNode root = FilterCompiler.compileTop(filter, field, budget);
    return root == CompositeNodes.PassAll.INSTANCE ? PASS_ALL : new CompiledTree(root, random, budget.spent());
  }
}
