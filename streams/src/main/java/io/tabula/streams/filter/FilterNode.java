package io.tabula.streams.filter;

import java.util.List;

/**
 * One compiled filter in the tree {@link FilterCompiler} builds. Contract: {@code in} is in row
 * order and is not modified; the result is in row order (it may be {@code in} itself) and may
 * contain duplicates. A node may send cells to {@link Evaluation#sink} in addition to its
 * result. Nodes are immutable and thread-safe; per-row state lives in the {@link Evaluation}.
 */
interface FilterNode {
  List<LabeledCell> apply(Evaluation ev, List<LabeledCell> in);
}
