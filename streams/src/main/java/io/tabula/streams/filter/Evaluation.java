package io.tabula.streams.filter;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * The state of evaluating a filter over one row: the row key (for key regexes), the random
 * source (for row sampling) and the cells that {@code sink} filters sent straight to the result.
 *
 * <p>Thread safety: not thread-safe; one instance per row evaluation, confined to its thread.
 */
final class Evaluation {
  private final byte[] rowKey;
  private final DoubleSupplier random;
  private final List<List<LabeledCell>> sunk = new ArrayList<>();

  Evaluation(byte[] rowKey, DoubleSupplier random) {
    this.rowKey = rowKey;
    this.random = random;
  }

  byte[] rowKey() {
    return rowKey;
  }

  /** A uniform draw in [0, 1). */
  double nextDouble() {
    return random.getAsDouble();
  }

  /** Sends {@code cells} (in row order) to the final result, bypassing every enclosing filter. */
  void sink(List<LabeledCell> cells) {
    if (!cells.isEmpty()) {
      sunk.add(cells);
    }
  }

  /** The final result: sunk cells and {@code output} merged into row order, sunk copies first. */
  List<LabeledCell> result(List<LabeledCell> output) {
    if (sunk.isEmpty()) {
      return output;
    }
    List<List<LabeledCell>> parts = new ArrayList<>(sunk);
    parts.add(output);
    return CellOrder.merge(parts);
  }
}
