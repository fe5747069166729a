package io.tabula.persistence.encoding;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A growable byte array for building blocks and records: the writing half of the engine's
 * small binary grammars ({@code bytes := varint length | bytes}, fixed-width integers
 * big-endian). {@link #readBytes} and {@link #readString} are the reading half. Not
 * thread-safe.
 */
public final class ByteSink {
  private byte[] buf;
  private int size;

  public ByteSink(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  public int size() {
    return size;
  }

  public void reset() {
    size = 0;
  }

  private void ensure(int more) {
    if (size + more > buf.length) {
      long want = Math.max((long) buf.length * 2, (long) size + more);
      if (want > Integer.MAX_VALUE - 16) {
        throw new IllegalStateException("buffer would exceed 2 GiB");
      }
      buf = Arrays.copyOf(buf, (int) want);
    }
  }

  public ByteSink put(byte[] b, int off, int len) {
    ensure(len);
    System.arraycopy(b, off, buf, size, len);
    size += len;
    return this;
  }

  public ByteSink put(byte[] b) {
    return put(b, 0, b.length);
  }

  public ByteSink putByte(int v) {
    ensure(1);
    buf[size++] = (byte) v;
    return this;
  }

  public ByteSink putVar(long v) {
    ensure(10);
    size = VarInts.putVarLong(buf, size, v);
    return this;
  }

  /** Drops everything past the first {@code newSize} bytes. */
  public void truncate(int newSize) {
    if (newSize < 0 || newSize > size) {
      throw new IllegalArgumentException("cannot truncate " + size + " bytes to " + newSize);
    }
    size = newSize;
  }

  public ByteSink putInt(int v) {
    ensure(4);
    putIntAt(buf, size, v);
    size += 4;
    return this;
  }

  public ByteSink putLong(long v) {
    ensure(8);
    putLongAt(buf, size, v);
    size += 8;
    return this;
  }

  /** varint length | bytes. */
  public ByteSink putLengthPrefixed(byte[] b) {
    return putVar(b.length).put(b);
  }

  /** The backing array, valid up to {@link #size()}; it changes when the sink grows. */
  public byte[] array() {
    return buf;
  }

  public byte[] toArray() {
    return Arrays.copyOf(buf, size);
  }

  public static void putIntAt(byte[] b, int p, int v) {
    b[p] = (byte) (v >>> 24);
    b[p + 1] = (byte) (v >>> 16);
    b[p + 2] = (byte) (v >>> 8);
    b[p + 3] = (byte) v;
  }

  public static void putLongAt(byte[] b, int p, long v) {
    putIntAt(b, p, (int) (v >>> 32));
    putIntAt(b, p + 4, (int) v);
  }

  public static int getIntAt(byte[] b, int p) {
    return ((b[p] & 0xFF) << 24) | ((b[p + 1] & 0xFF) << 16) | ((b[p + 2] & 0xFF) << 8) | (b[p + 3] & 0xFF);
  }

  public static long getLongAt(byte[] b, int p) {
    return ((long) getIntAt(b, p) << 32) | (getIntAt(b, p + 4) & 0xFFFFFFFFL);
  }

  public ByteSink putString(String s) {
    return putLengthPrefixed(s.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Reads {@code varint length | bytes}.
   *
   * @throws IllegalArgumentException if the length runs past the buffer
   */
  public static byte[] readBytes(ByteBuffer in) {
    int n = VarInts.getVarInt(in);
    if (n > in.remaining()) {
      throw new IllegalArgumentException("a " + n + "-byte field runs past the end (" + in.remaining() + " left)");
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  public static String readString(ByteBuffer in) {
    return new String(readBytes(in), StandardCharsets.UTF_8);
  }
}
