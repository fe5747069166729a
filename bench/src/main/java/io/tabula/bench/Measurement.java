package io.tabula.bench;

/**
 * One timed run of a workload on one engine.
 *
 * @param ops operations completed in the timed window (rows written, rows read, rows scanned)
 * @param nanos length of the timed window
 * @param bytes key and value bytes written or returned in the window
 * @param cache block-cache hits and misses in the window
 */
record Measurement(long ops, long nanos, long bytes, CacheCounters cache) {
  double opsPerSecond() {
    return nanos == 0 ? Double.NaN : ops * 1e9 / nanos;
  }

  /** Megabytes (10^6 bytes) of keys and values per second. */
  double megabytesPerSecond() {
    return nanos == 0 ? Double.NaN : bytes * 1e3 / nanos;
  }

  double seconds() {
    return nanos / 1e9;
  }
}
