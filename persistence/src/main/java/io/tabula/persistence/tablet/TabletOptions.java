package io.tabula.persistence.tablet;

/**
 * Tuning of every tablet of a node.
 *
 * @param memtableBytes a memtable is frozen and flushed once it holds this much (paper §5.4 minor compaction)
 * @param maxFilesPerGroup a merging compaction starts when a locality group has more SSTables than this
 * @param maxFrozenMemtables writers wait while this many frozen memtables are waiting to be flushed
 * @param valueSlabs memtables copy values into large chunks ({@code Memtable}), or keep each in its own array
 * @param sstableSyncEveryBytes a flush or compaction syncs the SSTable it writes each time it has
 *     written this much more ({@link io.tabula.persistence.storage.SyncEvery}); 0: only once, at its end
 */
public record TabletOptions(long memtableBytes, int maxFilesPerGroup, int maxFrozenMemtables, boolean valueSlabs,
    long sstableSyncEveryBytes) {
  /** Off: see {@link io.tabula.persistence.storage.SyncEvery} for what it buys and costs. */
  public static final long DEFAULT_SSTABLE_SYNC_EVERY_BYTES = 0;

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
    if (sstableSyncEveryBytes < 0) {
      throw new IllegalArgumentException("sstableSyncEveryBytes must be 0 (off) or more, was "
          + sstableSyncEveryBytes);
    }
  }

  /** With values in chunks and SSTables synced only at their ends. */
  public TabletOptions(long memtableBytes, int maxFilesPerGroup, int maxFrozenMemtables) {
    this(memtableBytes, maxFilesPerGroup, maxFrozenMemtables, true);
  }

  /** With SSTables synced only at their ends. */
  public TabletOptions(long memtableBytes, int maxFilesPerGroup, int maxFrozenMemtables, boolean valueSlabs) {
    this(memtableBytes, maxFilesPerGroup, maxFrozenMemtables, valueSlabs, DEFAULT_SSTABLE_SYNC_EVERY_BYTES);
  }

  /** 64 MiB memtables, at most 8 SSTables per group, 4 frozen memtables, values in chunks, SSTables synced at their ends. */
  public static TabletOptions defaults() {
    return new TabletOptions(64L << 20, 8, 4, true, DEFAULT_SSTABLE_SYNC_EVERY_BYTES);
  }

  public TabletOptions withMemtableBytes(long b) {
    return new TabletOptions(b, maxFilesPerGroup, maxFrozenMemtables, valueSlabs, sstableSyncEveryBytes);
  }

  public TabletOptions withMaxFilesPerGroup(int n) {
    return new TabletOptions(memtableBytes, n, maxFrozenMemtables, valueSlabs, sstableSyncEveryBytes);
  }

  public TabletOptions withValueSlabs(boolean on) {
    return new TabletOptions(memtableBytes, maxFilesPerGroup, maxFrozenMemtables, on, sstableSyncEveryBytes);
  }

  public TabletOptions withSstableSyncEveryBytes(long bytes) {
    return new TabletOptions(memtableBytes, maxFilesPerGroup, maxFrozenMemtables, valueSlabs, bytes);
  }
}
