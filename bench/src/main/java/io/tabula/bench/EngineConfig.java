package io.tabula.bench;

/**
 * The settings both engines get, so that they store and cache the data the same way.
 *
 * @param blockSize target size of a data block, bytes
 * @param cacheBytes capacity of the block cache of decompressed data blocks
 * @param memtableBytes a memtable is frozen and flushed at this size (Tabula
 *     {@code TabletOptions.memtableBytes}, RocksDB {@code write_buffer_size})
 * @param bloomBitsPerKey bits per key of the whole-key (row) bloom filter
 * @param writeWindow writes per shared fsync: Tabula keeps this many {@code apply} futures
 *     outstanding, RocksDB writes batches of this many puts
 * @param backgroundThreads threads for flushes and compactions in each engine
 * @param frozenMemtables memtables that may wait for their flush before writers stall
 * @param scanCacheBytes the scan cache of the engine that has one ({@link EngineKind#TABULA_SCAN_CACHE}),
 *     on top of the block cache
 */
record EngineConfig(int blockSize, long cacheBytes, long memtableBytes, int bloomBitsPerKey, int writeWindow,
    int backgroundThreads, int frozenMemtables, long scanCacheBytes) {
  EngineConfig {
    if (blockSize < 64) {
      throw new IllegalArgumentException("block size must be at least 64 bytes, was " + blockSize);
    }
    if (cacheBytes < 0) {
      throw new IllegalArgumentException("cache size must not be negative, was " + cacheBytes);
    }
    if (memtableBytes < 1024) {
      throw new IllegalArgumentException("memtable size must be at least 1 KiB, was " + memtableBytes);
    }
    if (writeWindow < 1) {
      throw new IllegalArgumentException("write window must be at least 1, was " + writeWindow);
    }
  }
}
