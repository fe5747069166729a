package io.tabula.persistence.encoding;

import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import java.util.Arrays;

/**
 * Binary form of a {@link CellKey}, as stored in SSTable blocks (docs/formats/sstable.md,
 * "Entry key"):
 *
 * <pre>
 * varint rowLen | row | u8 kindCode | varint familyLen | family | varint qualifierLen | qualifier
 *   | i64 timestamp | i64 sequence                       (i64 = 8 bytes big-endian)
 * </pre>
 *
 * Fields go from the most to the least shared, so consecutive keys of one row, and of one
 * column, share a long prefix. The byte order of encodings is <em>not</em> {@link
 * CellKey#ORDER}; compare decoded keys. Tombstones store their irrelevant fields empty or
 * zero, and a decoder refuses them otherwise. Stateless; thread-safe.
 */
public final class CellKeyCodec {
  private static final int FIXED_TAIL = 16;

  private CellKeyCodec() {}

  public static int encodedSize(CellKey k) {
    return VarInts.sizeOf(k.row().length) + k.row().length + 1 + VarInts.sizeOf(k.family().length)
        + k.family().length + VarInts.sizeOf(k.qualifier().length) + k.qualifier().length + FIXED_TAIL;
  }

  public static byte[] encode(CellKey k) {
    byte[] out = new byte[encodedSize(k)];
    int p = putBytes(out, 0, k.row());
    out[p++] = (byte) k.kind().code();
    p = putBytes(out, p, k.family());
    p = putBytes(out, p, k.qualifier());
    p = putLong(out, p, k.timestamp());
    putLong(out, p, k.sequence());
    return out;
  }

  /**
   * Decodes exactly {@code len} bytes at {@code off}.
   *
   * @throws IllegalArgumentException if they are not one well-formed key
   */
  public static CellKey decode(byte[] b, int off, int len) {
    return decode(b, off, len, null);
  }

  /**
   * Decodes exactly {@code len} bytes at {@code off}, sharing the row, family and qualifier
   * arrays of {@code previous} (may be null) where they hold the same bytes: consecutive keys
   * of a block mostly repeat them, and a key's arrays are never modified.
   *
   * @throws IllegalArgumentException if they are not one well-formed key
   */
  public static CellKey decode(byte[] b, int off, int len, CellKey previous) {
    int end = off + len;
    int[] pos = {off};
    byte[] row = getBytes(b, pos, end, "row", previous == null ? null : previous.row());
    if (pos[0] >= end) {
      throw new IllegalArgumentException("key ends before its kind");
    }
    int code = b[pos[0]++] & 0xFF;
    CellKind kind = CellKind.fromCode(code);
    if (kind == null) {
      throw new IllegalArgumentException("unknown cell kind code " + code);
    }
    byte[] family = getBytes(b, pos, end, "family", previous == null ? null : previous.family());
    byte[] qualifier = getBytes(b, pos, end, "qualifier", previous == null ? null : previous.qualifier());
    if (end - pos[0] != FIXED_TAIL) {
      throw new IllegalArgumentException("key has " + (end - pos[0]) + " bytes after its qualifier, expected "
          + FIXED_TAIL);
    }
    long timestamp = getLong(b, pos[0]);
    long sequence = getLong(b, pos[0] + 8);
    boolean normal = switch (kind) {
      case DELETE_ROW -> family.length == 0 && qualifier.length == 0 && timestamp == 0;
      case DELETE_FAMILY -> qualifier.length == 0 && timestamp == 0;
      case DELETE_COLUMN -> timestamp == 0;
      case PUT, MERGE -> true;
      case TOKEN -> family.length == 0;
    };
    if (!normal) {
      throw new IllegalArgumentException(kind + " key carries a family, qualifier or timestamp it cannot have");
    }
    return CellKey.of(row, family, qualifier, timestamp, sequence, kind);
  }

  /**
   * Compares the encoded key in {@code b[off, off + len)} with {@code target} in {@link
   * CellKey#ORDER}, reading it in place (no allocation: the hot loop of a block seek).
   *
   * @throws IllegalArgumentException if the bytes are not a well-formed key
   */
  public static int compare(byte[] b, int off, int len, CellKey target) {
    int end = off + len;
    int[] pos = {off};
    int rowLen = getLength(b, pos, end, "row");
    int rowOff = pos[0];
    pos[0] += rowLen;
    if (pos[0] >= end) {
      throw new IllegalArgumentException("key ends before its kind");
    }
    CellKind kind = CellKind.fromCode(b[pos[0]++] & 0xFF);
    if (kind == null) {
      throw new IllegalArgumentException("unknown cell kind code " + (b[pos[0] - 1] & 0xFF));
    }
    int famLen = getLength(b, pos, end, "family");
    int famOff = pos[0];
    pos[0] += famLen;
    int qualLen = getLength(b, pos, end, "qualifier");
    int qualOff = pos[0];
    pos[0] += qualLen;
    if (end - pos[0] != FIXED_TAIL) {
      throw new IllegalArgumentException("key has " + (end - pos[0]) + " bytes after its qualifier, expected "
          + FIXED_TAIL);
    }
    return CellKey.compare(b, rowOff, rowLen, kind, b, famOff, famLen, b, qualOff, qualLen, getLong(b, pos[0]),
        getLong(b, pos[0] + 8), target);
  }

  public static CellKey decode(byte[] b) {
    return decode(b, 0, b.length);
  }

  private static int putBytes(byte[] out, int p, byte[] v) {
    p = VarInts.putVarLong(out, p, v.length);
    System.arraycopy(v, 0, out, p, v.length);
    return p + v.length;
  }

  private static int putLong(byte[] out, int p, long v) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      out[p++] = (byte) (v >>> shift);
    }
    return p;
  }

  private static long getLong(byte[] b, int p) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (b[p + i] & 0xFF);
    }
    return v;
  }

  /** The field's bytes: {@code same} if it holds exactly them, else a copy. */
  private static byte[] getBytes(byte[] b, int[] pos, int end, String field, byte[] same) {
    int n = getLength(b, pos, end, field);
    int p = pos[0];
    pos[0] = p + n;
    if (n == 0) {
      return ByteArrays.EMPTY;
    }
    // Sorted neighbours mostly differ near the end: the last byte rules most of them out.
    if (same != null && same.length == n && b[p + n - 1] == same[n - 1] && Arrays.equals(b, p, p + n, same, 0, n)) {
      return same;
    }
    return Arrays.copyOfRange(b, p, p + n);
  }

  /** Reads a field's length varint, leaving {@code pos[0]} on the field; checks it fits before {@code end}. */
  private static int getLength(byte[] b, int[] pos, int end, String field) {
    long n = 0;
    int p = pos[0];
    for (int shift = 0; ; shift += 7) {
      if (p >= end || shift > 28) {
        throw new IllegalArgumentException("bad length varint of " + field);
      }
      byte x = b[p++];
      n |= (long) (x & 0x7F) << shift;
      if ((x & 0x80) == 0) {
        break;
      }
    }
    if (n > end - p) {
      throw new IllegalArgumentException(field + " of " + n + " bytes runs past the key's end");
    }
    pos[0] = p;
    return (int) n;
  }
}
