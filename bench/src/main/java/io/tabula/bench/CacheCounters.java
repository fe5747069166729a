package io.tabula.bench;

/** Block cache hits and misses counted by an engine since it opened; subtract two readings for a window. */
record CacheCounters(long hits, long misses) {
  static final CacheCounters NONE = new CacheCounters(0, 0);

  CacheCounters minus(CacheCounters earlier) {
    return new CacheCounters(hits - earlier.hits, misses - earlier.misses);
  }

  /** Hits over lookups, or NaN when there was no lookup. */
  double hitRate() {
    long total = hits + misses;
    return total == 0 ? Double.NaN : (double) hits / total;
  }
}
