package io.tabula.persistence.tablet;

/**
 * Which of a locality group's SSTables a merging compaction takes (paper §5.4), given their
 * sizes newest first. Plain function, no I/O.
 *
 * <p>A merge runs only when the group has more files than the bound, and it takes a run of
 * files adjacent in age whose sizes are alike: no file in the run is larger than {@value
 * #RATIO} times all the others together. Among such runs it takes the one that writes the
 * fewest bytes per file it removes. So flushes of equal size are merged together, and a large
 * file is rewritten only once as much new data has piled up beside it: every byte is
 * rewritten a few times over the tablet's life, not once per merge. (Always merging the
 * newest files, a large merged file among them, rewrote it at every merge: on a steady
 * stream of writes the merging compactions cost more CPU than everything else.)
 *
 * <p>When no run of alike files exists (sizes growing geometrically with age), the newest
 * files are merged so that half the bound remains, as before.
 */
final class CompactionPicker {
  /** How much larger than the rest of its run a file may be. */
  static final double RATIO = 1.2;

  private CompactionPicker() {}

  /** Files {@code [from, to)} in newest-first order. */
  record Run(int from, int to) {
    int size() {
      return to - from;
    }
  }

  /**
   * The files to merge, or null if there are not more than {@code maxFiles}.
   *
   * @param sizes bytes of each file, newest first
   */
  static Run pick(long[] sizes, int maxFiles) {
    int n = sizes.length;
    if (n <= maxFiles) {
      return null;
    }
    Run best = null;
    double bestCost = Double.MAX_VALUE;
    for (int from = 0; from < n - 1; from++) {
      long sum = sizes[from];
      long largest = sizes[from];
      for (int to = from + 2; to <= n; to++) {
        sum += sizes[to - 1];
        largest = Math.max(largest, sizes[to - 1]);
        if (largest > RATIO * (sum - largest)) {
          continue;
        }
        double cost = (double) sum / (to - from - 1);
        if (cost < bestCost || (cost == bestCost && to - from > best.size())) {
          best = new Run(from, to);
          bestCost = cost;
        }
      }
    }
    return best != null ? best : new Run(0, Math.max(2, n - maxFiles / 2));
  }
}
