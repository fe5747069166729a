package io.tabula.streams.filter;

import java.util.ArrayList;
import java.util.List;

/**
 * The nodes that route cells rather than judge them: pass all, block all, sink, chain,
 * interleave and condition. See {@link RowFilters} for the semantics each one implements.
 */
final class CompositeNodes {
  private CompositeNodes() {}

  /** {@code pass_all_filter}, and a top-level filter with no kind set. */
  enum PassAll implements FilterNode {
    INSTANCE;

    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      return in;
    }
  }

  /** {@code block_all_filter}, and an absent condition branch. */
  enum BlockAll implements FilterNode {
    INSTANCE;

    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      return List.of();
    }
  }

  /** {@code sink}: its input goes to the final result; its parent receives nothing. */
  enum Sink implements FilterNode {
    INSTANCE;

    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      ev.sink(in);
      return List.of();
    }
  }

  /** {@code chain}: each filter's output is the next one's input. */
  record Chain(List<FilterNode> filters) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      List<LabeledCell> cells = in;
      for (FilterNode f : filters) {
        if (cells.isEmpty()) {
          return cells; // every filter maps no cells to no cells, and sinks nothing
        }
        cells = f.apply(ev, cells);
      }
      return cells;
    }
  }

  /** {@code interleave}: every filter sees the input; outputs are merged, duplicates kept. */
  record Interleave(List<FilterNode> filters) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      List<List<LabeledCell>> parts = new ArrayList<>(filters.size());
      for (FilterNode f : filters) {
        parts.add(f.apply(ev, in));
      }
      return CellOrder.merge(parts);
    }
  }

  /**
   * {@code condition}: the predicate runs on the input only to learn whether it outputs any
   * cell; its cells, and so its labels, are discarded. Then one branch runs on the input.
   */
  record Condition(FilterNode predicate, FilterNode onTrue, FilterNode onFalse) implements FilterNode {
    @Override
    public List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in) {
      boolean matched = !predicate.apply(ev, in).isEmpty();
      return (matched ? onTrue : onFalse).apply(ev, in);
    }
  }
}
