package io.tabula.persistence.sstable;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.CellKeyCodec;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.storage.CorruptionException;
import java.util.Arrays;

/**
 * A data or index block, decompressed and checked, as {@link BlockBuilder} laid it out. The
 * bytes may be a slice of a larger array (an in-memory table's file image). Immutable and
 * thread-safe; each {@link Cursor} is single-threaded. Any structural damage found while
 * reading is a {@link CorruptionException} naming the block's file offset.
 */
final class Block implements BlockCache.Weighed {
  private static final int OVERHEAD = 64;

  private final byte[] data;
  private final int start;
  private final int restartsStart;
  private final int numRestarts;
  private final int length;
  private final String file;
  private final long fileOffset;

  private Block(byte[] data, int start, int length, int restartsStart, int numRestarts, String file, long fileOffset) {
    this.data = data;
    this.start = start;
    this.length = length;
    this.restartsStart = restartsStart;
    this.numRestarts = numRestarts;
    this.file = file;
    this.fileOffset = fileOffset;
  }

  /** Checks the restart array of {@code data[off, off + len)}; the entries are checked as read. */
  static Block parse(byte[] data, int off, int len, String file, long fileOffset) throws CorruptionException {
    int tail = SSTableFormat.RESTART_COUNT_SIZE;
    if (len < tail + SSTableFormat.RESTART_ENTRY_SIZE) {
      throw new CorruptionException(file, fileOffset, "block of " + len + " bytes is too short for its restart array");
    }
    int n = ByteSink.getIntAt(data, off + len - tail);
    long restartBytes = (long) n * SSTableFormat.RESTART_ENTRY_SIZE;
    if (n < 1 || restartBytes > len - tail) {
      throw new CorruptionException(file, fileOffset, "block claims " + n + " restart points in " + len + " bytes");
    }
    int restartsStart = (int) (len - tail - restartBytes);
    int prev = -1;
    for (int i = 0; i < n; i++) {
      int r = ByteSink.getIntAt(data, off + restartsStart + i * SSTableFormat.RESTART_ENTRY_SIZE);
      if (r <= prev || r < 0 || (r >= restartsStart && !(i == 0 && r == 0))) {
        throw new CorruptionException(file, fileOffset, "restart point " + i + " at " + r + " is out of order or past "
            + restartsStart);
      }
      prev = r;
    }
    if (ByteSink.getIntAt(data, off + restartsStart) != 0) {
      throw new CorruptionException(file, fileOffset, "first restart point is not at 0");
    }
    return new Block(data, off, len, off + restartsStart, n, file, fileOffset);
  }

  @Override
  public int weightBytes() {
    // A slice of a file image holds only its own bytes' worth of the image.
    return length + OVERHEAD;
  }

  Cursor cursor() {
    return new Cursor();
  }

  /** A position in the block. Starts invalid; not thread-safe. */
  final class Cursor {
    private int next = restartsStart;
    private byte[] keyBuf = new byte[64];
    private int keyLen;
    private CellKey key;
    /** The last key decoded (kept across seeks): the next decode shares its arrays where equal. */
    private CellKey lastDecoded;
    private int valueOff;
    private int valueLen;
    private byte[] valueCopy;
    private int pos;

    boolean valid() {
      return key != null;
    }

    CellKey key() {
      return key;
    }

    byte[] value() {
      if (valueCopy == null) {
        valueCopy = Arrays.copyOfRange(data, valueOff, valueOff + valueLen);
      }
      return valueCopy;
    }

    void seekToFirst() throws CorruptionException {
      seekToRestart(0);
      advance();
    }

    /** Positions on the first entry at or after {@code target}; invalid if none in this block. */
    void seek(CellKey target) throws CorruptionException {
      int lo = 0;
      int hi = numRestarts - 1;
      while (lo < hi) {
        int mid = (lo + hi + 1) >>> 1;
        seekToRestart(mid);
        if (!step() || compareRaw(target) < 0) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      seekToRestart(lo);
      while (step()) {
        if (compareRaw(target) >= 0) {
          decodeKey();
          return;
        }
      }
      key = null;
    }

    /** Compares the raw key under the cursor (after {@link #step}) with {@code target}, in place. */
    private int compareRaw(CellKey target) throws CorruptionException {
      try {
        return CellKeyCodec.compare(keyBuf, 0, keyLen, target);
      } catch (IllegalArgumentException e) {
        throw corrupt("bad key in entry: " + e.getMessage());
      }
    }

    /** Moves to the next entry; invalid past the last. */
    void advance() throws CorruptionException {
      if (step()) {
        decodeKey();
      } else {
        key = null;
      }
    }

    /** Reads the next entry's key bytes and value position, without decoding the key; false past the last. */
    private boolean step() throws CorruptionException {
      valueCopy = null;
      if (next >= restartsStart) {
        next = restartsStart;
        return false;
      }
      pos = next;
      int shared = readVar();
      int unshared = readVar();
      int vlen = readVar();
      if (shared > keyLen || (long) unshared + vlen > restartsStart - pos) {
        throw corrupt("entry at block offset " + (next - start) + " shares " + shared + " of " + keyLen
            + " key bytes or runs past the entries");
      }
      int newLen = shared + unshared;
      if (newLen > keyBuf.length) {
        keyBuf = Arrays.copyOf(keyBuf, Math.max(newLen, keyBuf.length * 2));
      }
      System.arraycopy(data, pos, keyBuf, shared, unshared);
      keyLen = newLen;
      valueOff = pos + unshared;
      valueLen = vlen;
      next = valueOff + vlen;
      return true;
    }

    private void decodeKey() throws CorruptionException {
      try {
        key = CellKeyCodec.decode(keyBuf, 0, keyLen, lastDecoded);
        lastDecoded = key;
      } catch (IllegalArgumentException e) {
        throw corrupt("bad key in entry: " + e.getMessage());
      }
    }

    private void seekToRestart(int i) {
      next = start + ByteSink.getIntAt(data, restartsStart + i * SSTableFormat.RESTART_ENTRY_SIZE);
      keyLen = 0;
      key = null;
      valueCopy = null;
    }

    private int readVar() throws CorruptionException {
      int v = 0;
      for (int shift = 0; shift <= 28; shift += 7) {
        if (pos >= restartsStart) {
          throw corrupt("entry header runs past the entries");
        }
        byte b = data[pos++];
        v |= (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          if (v < 0) {
            break;
          }
          return v;
        }
      }
      throw corrupt("bad varint in an entry header");
    }

    private CorruptionException corrupt(String reason) {
      return new CorruptionException(file, fileOffset, reason);
    }
  }
}
