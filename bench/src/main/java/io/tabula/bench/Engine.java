package io.tabula.bench;

import java.io.Closeable;
import java.io.IOException;

/**
 * One storage engine as the Figure 6 workloads drive it: load rows, read one row, scan
 * everything, settle the files, count block-cache hits. Each implementation is a thin
 * adapter that adds no buffering or caching of its own, so a measurement is the engine's.
 *
 * <p>Not thread-safe: the benchmark drives one engine from one thread. The engine owns
 * its directory's files while open; {@link #close()} releases everything it holds.
 */
interface Engine extends Closeable {
  /** Short name for tables: {@code Tabula} or {@code RocksDB}. */
  String name();

  /**
   * Writes the rows {@code order[0..]} in that order until all are written or {@code
   * deadlineNanos} ({@link System#nanoTime()}) passes, and waits until every write issued
   * is acknowledged under the engine's {@link WriteMode}.
   *
   * @return how many rows were written
   */
  int write(Dataset data, int[] order, long deadlineNanos) throws IOException;

  /** The value stored under {@code key}, or null. */
  byte[] get(byte[] key) throws IOException;

  /** Iterates every row in key order, touching each key and value, until done or the deadline passes. */
  ScanTally scan(long deadlineNanos) throws IOException;

  /** Flushes the memtables and compacts all files into the fewest the engine makes, and waits for it. */
  void flushAndCompact() throws IOException;

  /** Data-block cache hits and misses since the engine opened. */
  CacheCounters cacheCounters();
}
