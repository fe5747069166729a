package io.tabula.actors.tablet;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Per row, the writes not yet durable and the row-atomic requests (check-and-mutate,
 * read-modify-write) waiting for them: such a request reads the row, so it runs only once
 * no earlier write to the row is in flight. Not thread-safe: the tablet actor's own.
 *
 * @param <C> a waiting request
 */
final class RowGate<C> {
  private final Map<RowKey, int[]> writesInFlight = new HashMap<>();
  private final Map<RowKey, ArrayDeque<C>> waiting = new HashMap<>();

  /** A write to {@code row} has started. */
  void writeStarted(byte[] row) {
    writesInFlight.computeIfAbsent(new RowKey(row), k -> new int[1])[0]++;
  }

  /** Whether {@code c} must wait for writes to {@code row}; if so it is queued. */
  boolean mustWait(byte[] row, C c) {
    RowKey key = new RowKey(row);
    if (writesInFlight.containsKey(key)) {
      waiting.computeIfAbsent(key, k -> new ArrayDeque<>()).add(c);
      return true;
    }
    return false;
  }

  /**
   * One write to {@code row} is over: once none is left, queued requests are handed to
   * {@code run} in order, until one of them starts a write to the row again.
   */
  void writeFinished(byte[] row, Consumer<C> run) {
    RowKey key = new RowKey(row);
    int[] count = writesInFlight.get(key);
    if (count != null && --count[0] > 0) {
      return;
    }
    writesInFlight.remove(key);
    ArrayDeque<C> q = waiting.get(key);
    while (q != null && !q.isEmpty() && !writesInFlight.containsKey(key)) {
      run.accept(q.poll());
    }
    if (q != null && q.isEmpty()) {
      waiting.remove(key);
    }
  }
}
