package io.tabula.persistence.encoding;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A growable byte array for building records: the writing half of the engine's small
 * binary grammars ({@code bytes := varint length | bytes}, fixed-width integers
 * big-endian). {@link #readBytes} and {@link #readString} are the reading half. Not
 * thread-safe.
 */
public final class ByteSink {
  private byte[] buf;
  private int size;

  public ByteSink(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  private void ensure(int more) {
    if (size + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
    }
  }

  public ByteSink put(int b) {
    ensure(1);
    buf[size++] = (byte) b;
    return this;
  }

  public ByteSink put(byte[] b) {
    ensure(b.length);
    System.arraycopy(b, 0, buf, size, b.length);
    size += b.length;
    return this;
  }

  public ByteSink putVarLong(long v) {
    ensure(10);
    size = VarInts.putVarLong(buf, size, v);
    return this;
  }

  public ByteSink putLong(long v) {
    ensure(8);
    for (int s = 56; s >= 0; s -= 8) {
      buf[size++] = (byte) (v >>> s);
    }
    return this;
  }

  /** {@code varint length | bytes}. */
  public ByteSink putBytes(byte[] b) {
    return putVarLong(b.length).put(b);
  }

  public ByteSink putString(String s) {
    return putBytes(s.getBytes(StandardCharsets.UTF_8));
  }

  public int size() {
    return size;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
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
