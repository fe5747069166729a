package io.tabula.persistence.sstable;

import io.tabula.persistence.encoding.ByteSink;
import java.util.Arrays;

/**
 * Builds one data or index block with key prefix compression (docs/formats/sstable.md,
 * "Data block"):
 *
 * <pre>
 * entry*  | u32 restartOffset × n | u32 n
 * entry   := varint shared | varint unshared | varint valueLen | key[shared..] | value
 * </pre>
 *
 * Every {@code restartInterval} entries, and after {@value #RESTART_BYTES} bytes of entries,
 * the key is stored whole ({@code shared = 0}) and its offset recorded as a restart point, so
 * a reader can binary-search the restarts. The
 * caller adds keys in increasing order; this class only sees encoded bytes. Not thread-safe.
 */
final class BlockBuilder {
  /**
   * Entry bytes after which the next entry is a restart point even before {@code
   * restartInterval} entries: with large values a block holds few entries, and a seek's
   * forward scan touched a new cache line for every entry it stepped over (a fifth of a
   * point read's CPU with 1000-byte values and one restart per block).
   */
  static final int RESTART_BYTES = 2048;
  private final int restartInterval;
  private final ByteSink out;
  private int[] restarts = new int[16];
  private int restartCount;
  private int sinceRestart;
  private int restartAt;
  private int entries;
  private byte[] lastKey = new byte[0];

  BlockBuilder(int restartInterval, int expectedSize) {
    this.restartInterval = restartInterval;
    this.out = new ByteSink(expectedSize);
    reset();
  }

  void reset() {
    out.reset();
    restartCount = 0;
    addRestart(0);
    sinceRestart = 0;
    restartAt = 0;
    entries = 0;
    lastKey = new byte[0];
  }

  private void addRestart(int offset) {
    if (restartCount == restarts.length) {
      restarts = Arrays.copyOf(restarts, restartCount * 2);
    }
    restarts[restartCount++] = offset;
  }

  void add(byte[] key, byte[] value) {
    int shared = 0;
    if (sinceRestart == restartInterval || (sinceRestart > 0 && out.size() - restartAt >= RESTART_BYTES)) {
      restartAt = out.size();
      addRestart(restartAt);
      sinceRestart = 0;
    } else {
      int max = Math.min(lastKey.length, key.length);
      while (shared < max && lastKey[shared] == key[shared]) {
        shared++;
      }
    }
    out.putVar(shared).putVar(key.length - shared).putVar(value.length);
    out.put(key, shared, key.length - shared).put(value);
    lastKey = key;
    sinceRestart++;
    entries++;
  }

  boolean isEmpty() {
    return entries == 0;
  }

  /** Bytes {@link #finish()} would return now. */
  int sizeEstimate() {
    return out.size() + restartCount * SSTableFormat.RESTART_ENTRY_SIZE + SSTableFormat.RESTART_COUNT_SIZE;
  }

  /** The block's bytes; call {@link #reset()} before building the next one. */
  byte[] finish() {
    for (int i = 0; i < restartCount; i++) {
      out.putInt(restarts[i]);
    }
    out.putInt(restartCount);
    return out.toArray();
  }
}
