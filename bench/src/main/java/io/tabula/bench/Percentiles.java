package io.tabula.bench;

/** Percentiles of measured values by the nearest-rank method. Stateless. */
final class Percentiles {
  private Percentiles() {
  }

  /**
   * The value at rank ceil(p * n) of {@code sorted} (ascending, not empty): at least a share
   * {@code p} of the values are at or below it.
   */
  static long nearestRank(long[] sorted, double p) {
    int idx = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, idx))];
  }
}
