package io.tabula.persistence.encoding;

import java.nio.ByteBuffer;

/**
 * Unsigned LEB128 varints (7 bits per byte, low group first, high bit = more), as in
 * protobuf and LevelDB. A 32-bit value takes 1–5 bytes, a 64-bit value 1–10.
 *
 * <p>Stateless; thread-safe.
 */
public final class VarInts {
  private VarInts() {}

  /** Bytes {@link #putVarLong} will write for {@code v}. */
  public static int sizeOf(long v) {
    int n = 1;
    while ((v & ~0x7FL) != 0) {
      v >>>= 7;
      n++;
    }
    return n;
  }

  /** Writes {@code v} at {@code pos} in {@code dst}; returns the position after it. */
  public static int putVarLong(byte[] dst, int pos, long v) {
    while ((v & ~0x7FL) != 0) {
      dst[pos++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    dst[pos++] = (byte) v;
    return pos;
  }

  public static void putVarLong(ByteBuffer dst, long v) {
    while ((v & ~0x7FL) != 0) {
      dst.put((byte) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    dst.put((byte) v);
  }

  /**
   * Reads a varint from {@code src}, advancing it.
   *
   * @throws IllegalArgumentException if the varint runs past 10 bytes or the buffer's end
   */
  public static long getVarLong(ByteBuffer src) {
    long result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!src.hasRemaining()) {
        throw new IllegalArgumentException("varint runs past the end of its buffer");
      }
      byte b = src.get();
      result |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return result;
      }
    }
    throw new IllegalArgumentException("varint longer than 10 bytes");
  }

  /** Reads a varint that must fit a non-negative int. */
  public static int getVarInt(ByteBuffer src) {
    long v = getVarLong(src);
    if (v < 0 || v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("varint " + v + " does not fit a non-negative int");
    }
    return (int) v;
  }
}
