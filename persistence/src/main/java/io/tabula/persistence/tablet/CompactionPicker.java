package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;

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
 *
 * <p>The bound counts files a read may have to look at: the most files whose row ranges
 * hold one row ({@link #overlapDepth}). Files side by side in key order, as a load in key
 * order leaves them, add nothing to a point read (reads skip files outside their rows), so
 * they are not merged while writes go on, up to {@value #SIDE_BY_SIDE} times the bound in
 * number; a tablet still joins them once it falls quiet (its major compaction). A merge of
 * side-by-side files only copies them, and during a load in key order such merges took a
 * fifth of the node's CPU.
 */
final class CompactionPicker {
  /** How many times the bound side-by-side files may number before they are merged anyway. */
  static final int SIDE_BY_SIDE = 4;

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
   * The files to merge, or null if a row lies in no more than {@code maxFiles} of them and
   * there are not too many side by side.
   *
   * @param sizes bytes of each file, newest first
   * @param firstRows each file's first row within the tablet
   * @param lastRows each file's last row within the tablet (inclusive)
   */
  static Run pick(long[] sizes, byte[][] firstRows, byte[][] lastRows, int maxFiles) {
    if (sizes.length <= SIDE_BY_SIDE * maxFiles && overlapDepth(firstRows, lastRows) <= maxFiles) {
      return null;
    }
    return pick(sizes, maxFiles);
  }

  /**
   * The most ranges {@code [first[i], last[i]]} (rows, both ends inclusive) that hold one
   * row. The most are found at some range's first row, so counting there suffices.
   */
  static int overlapDepth(byte[][] first, byte[][] last) {
    int depth = 0;
    for (int i = 0; i < first.length; i++) {
      int holding = 0;
      for (int j = 0; j < first.length; j++) {
        if (ByteArrays.compare(first[j], first[i]) <= 0 && ByteArrays.compare(first[i], last[j]) <= 0) {
          holding++;
        }
      }
      depth = Math.max(depth, holding);
    }
    return depth;
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
