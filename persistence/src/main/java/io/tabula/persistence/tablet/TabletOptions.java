package io.tabula.persistence.tablet;

/**
 * Tuning of every tablet of a node.
 *
 * @param memtableBytes a memtable is frozen and flushed once it holds this much (paper §5.4 minor compaction)
 * @param maxFilesPerGroup a merging compaction starts when a locality group has more SSTables than this
 * @param maxFrozenMemtables writers wait while this many frozen memtables are waiting to be flushed
 * @param valueSlabs memtables copy values into large chunks ({@code Memtable}), or keep each in its own array
 */
public record TabletOptions(long memtableBytes, int maxFilesPerGroup, int maxFrozenMemtables, boolean valueSlabs) {
  public TabletOptions {
    if (memtableBytes < 1024) {
      throw new IllegalArgumentException("memtableBytes must be at least 1024, was " + memtableBytes);
    }
    if (maxFilesPerGroup < 2) {
      throw new IllegalArgumentException("maxFilesPerGroup must be at least 2, was " + maxFilesPerGroup);
    }
    if (maxFrozenMemtables < 1) {
      throw new IllegalArgumentException("maxFrozenMemtables must be at least 1, was " + maxFrozenMemtables);
    }
  }

  public TabletOptions(long memtableBytes, int maxFilesPerGroup, int maxFrozenMemtables) {
    this(memtableBytes, maxFilesPerGroup, maxFrozenMemtables, true);
  }

  /** 64 MiB memtables, at most 8 SSTables per group, 4 frozen memtables, values in chunks. */
  public static TabletOptions defaults() {
    return new TabletOptions(64L << 20, 8, 4, true);
  }

  public TabletOptions withMemtableBytes(long b) {
    return new TabletOptions(b, maxFilesPerGroup, maxFrozenMemtables, valueSlabs);
  }

  public TabletOptions withMaxFilesPerGroup(int n) {
    return new TabletOptions(memtableBytes, n, maxFrozenMemtables, valueSlabs);
  }

  public TabletOptions withValueSlabs(boolean on) {
    return new TabletOptions(memtableBytes, maxFilesPerGroup, maxFrozenMemtables, on);
  }
}
