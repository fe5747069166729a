package io.tabula.persistence.encoding;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/** Helpers for byte strings: unsigned order (row keys sort as unsigned bytes), printing. */
public final class ByteArrays {
  public static final byte[] EMPTY = new byte[0];
  private static final VarHandle BIG_ENDIAN_LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private ByteArrays() {}

  /** Lexicographic unsigned comparison, the order of row keys and qualifiers. */
  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  /**
   * Bytes {@code from} to {@code from + 8} of {@code a} as an unsigned big-endian word, the
   * bytes past the end taken as zero. If two arrays' words at the same offset differ,
   * {@link Long#compareUnsigned} on the words orders the arrays as {@link #compare} does
   * (given equal bytes before {@code from}).
   */
  public static long word(byte[] a, int from) {
    if (a.length >= from + 8) {
      return (long) BIG_ENDIAN_LONG.get(a, from);
    }
    long w = 0;
    for (int i = 0; i < 8; i++) {
      int j = from + i;
      w = (w << 8) | (j < a.length ? a[j] & 0xFF : 0);
    }
    return w;
  }

  public static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A short printable form for error messages: UTF-8 if printable ASCII, else hex. */
  public static String show(byte[] b) {
    if (b == null) {
      return "null";
    }
    boolean printable = true;
    for (byte x : b) {
      if (x < 0x20 || x > 0x7E) {
        printable = false;
        break;
      }
    }
    String s = printable ? '"' + new String(b, StandardCharsets.US_ASCII) + '"' : "0x" + HexFormat.of().formatHex(b);
    return s.length() > 80 ? s.substring(0, 77) + "..." : s;
  }

  /** The smallest byte string greater than every string with prefix {@code p}; null if none. */
  public static byte[] prefixEnd(byte[] p) {
    byte[] end = p.clone();
    for (int i = end.length - 1; i >= 0; i--) {
      if (end[i] != (byte) 0xFF) {
        end[i]++;
        return Arrays.copyOf(end, i + 1);
      }
    }
    return null;
  }
}
