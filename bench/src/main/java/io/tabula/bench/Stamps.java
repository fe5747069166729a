package io.tabula.bench;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A time per write, by the write's index: set from any thread, read from any other. Times are
 * positive (a caller measures from an origin it keeps); 0 means not set. Grows in chunks of
 * {@value #CHUNK} slots as indexes are used, so a run needs no size ahead and never copies.
 * Thread-safe.
 */
final class Stamps {
  private static final int CHUNK_BITS = 16;
  static final int CHUNK = 1 << CHUNK_BITS;

  private final AtomicReferenceArray<AtomicLongArray> chunks =
      new AtomicReferenceArray<>((Integer.MAX_VALUE >> CHUNK_BITS) + 1);

  /** Sets the time of write {@code i}. Requires: {@code i >= 0}, {@code nanos > 0}. */
  void set(int i, long nanos) {
    chunk(i).set(i & (CHUNK - 1), nanos);
  }

  /** Sets the time of write {@code i} unless it is set already; whether this call set it. */
  boolean setFirst(int i, long nanos) {
    return chunk(i).compareAndSet(i & (CHUNK - 1), 0, nanos);
  }

  /** The time of write {@code i}, 0 if none was set. */
  long get(int i) {
    AtomicLongArray c = chunks.get(i >>> CHUNK_BITS);
    return c == null ? 0 : c.get(i & (CHUNK - 1));
  }

  private AtomicLongArray chunk(int i) {
    if (i < 0) {
      throw new IllegalArgumentException("write index must not be negative, was " + i);
    }
    int at = i >>> CHUNK_BITS;
    AtomicLongArray c = chunks.get(at);
    if (c == null) {
      chunks.compareAndSet(at, null, new AtomicLongArray(CHUNK));
      c = chunks.get(at);
    }
    return c;
  }
}
