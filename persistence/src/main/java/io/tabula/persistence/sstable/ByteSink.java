package io.tabula.persistence.sstable;

import io.tabula.persistence.encoding.VarInts;
import java.util.Arrays;

/** A growable byte buffer for building blocks; big-endian fixed-width fields. Not thread-safe. */
final class ByteSink {
  private byte[] buf;
  private int size;

  ByteSink(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  int size() {
    return size;
  }

  void reset() {
    size = 0;
  }

  private void ensure(int more) {
    if (size + more > buf.length) {
      long want = Math.max((long) buf.length * 2, (long) size + more);
      if (want > Integer.MAX_VALUE - 16) {
        throw new IllegalStateException("block would exceed 2 GiB");
      }
      buf = Arrays.copyOf(buf, (int) want);
    }
  }

  ByteSink put(byte[] b, int off, int len) {
    ensure(len);
    System.arraycopy(b, off, buf, size, len);
    size += len;
    return this;
  }

  ByteSink put(byte[] b) {
    return put(b, 0, b.length);
  }

  ByteSink putByte(int v) {
    ensure(1);
    buf[size++] = (byte) v;
    return this;
  }

  ByteSink putVar(long v) {
    ensure(10);
    size = VarInts.putVarLong(buf, size, v);
    return this;
  }

  ByteSink putInt(int v) {
    ensure(4);
    putIntAt(buf, size, v);
    size += 4;
    return this;
  }

  ByteSink putLong(long v) {
    ensure(8);
    putLongAt(buf, size, v);
    size += 8;
    return this;
  }

  /** varint length | bytes. */
  ByteSink putLengthPrefixed(byte[] b) {
    return putVar(b.length).put(b);
  }

  byte[] toArray() {
    return Arrays.copyOf(buf, size);
  }

  static void putIntAt(byte[] b, int p, int v) {
    b[p] = (byte) (v >>> 24);
    b[p + 1] = (byte) (v >>> 16);
    b[p + 2] = (byte) (v >>> 8);
    b[p + 3] = (byte) v;
  }

  static void putLongAt(byte[] b, int p, long v) {
    putIntAt(b, p, (int) (v >>> 32));
    putIntAt(b, p + 4, (int) v);
  }

  static int getIntAt(byte[] b, int p) {
    return ((b[p] & 0xFF) << 24) | ((b[p + 1] & 0xFF) << 16) | ((b[p + 2] & 0xFF) << 8) | (b[p + 3] & 0xFF);
  }

  static long getLongAt(byte[] b, int p) {
    return ((long) getIntAt(b, p) << 32) | (getIntAt(b, p + 4) & 0xFFFFFFFFL);
  }
}
