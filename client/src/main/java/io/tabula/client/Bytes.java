package io.tabula.client;

import com.google.protobuf.ByteString;
import java.util.Objects;

/** Conversions of the key, qualifier and value arguments the public API accepts. */
final class Bytes {
  private Bytes() {}

  static ByteString of(String utf8, String what) {
    return ByteString.copyFromUtf8(Objects.requireNonNull(utf8, what));
  }

  static ByteString of(byte[] bytes, String what) {
    return ByteString.copyFrom(Objects.requireNonNull(bytes, what));
  }

  static ByteString of(ByteString bytes, String what) {
    return Objects.requireNonNull(bytes, what);
  }

  /** A 64-bit integer big-endian, the encoding read-modify-write increments use. */
  static ByteString ofLong(long v) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) v;
      v >>>= 8;
    }
    return ByteString.copyFrom(b);
  }

  static ByteString key(ByteString key) {
    if (key.isEmpty()) {
      throw new IllegalArgumentException("row key must not be empty");
    }
    return key;
  }

  static String family(String family) {
    if (family == null || family.isEmpty()) {
      throw new IllegalArgumentException("family must not be empty");
    }
    return family;
  }

  /** The immediate successor of {@code key} in byte order: the key with a zero byte appended. */
  static ByteString successor(ByteString key) {
    return key.concat(ByteString.copyFrom(new byte[] {0}));
  }

  /**
   * The first key after every key starting with {@code prefix} (the prefix with its last
   * byte below 0xff incremented and the rest dropped), or empty if there is none.
   */
  static ByteString prefixEnd(ByteString prefix) {
    byte[] b = prefix.toByteArray();
    for (int i = b.length - 1; i >= 0; i--) {
      if (b[i] != (byte) 0xff) {
        byte[] end = java.util.Arrays.copyOf(b, i + 1);
        end[i]++;
        return ByteString.copyFrom(end);
      }
    }
    return ByteString.EMPTY;
  }

  static int compare(ByteString a, ByteString b) {
    return ByteString.unsignedLexicographicalComparator().compare(a, b);
  }
}
