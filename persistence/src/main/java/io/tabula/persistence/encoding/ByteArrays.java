package io.tabula.persistence.encoding;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/** Helpers for byte strings: unsigned order (row keys sort as unsigned bytes), printing. */
public final class ByteArrays {
  public static final byte[] EMPTY = new byte[0];

  private ByteArrays() {}

  /** Lexicographic unsigned comparison, the order of row keys and qualifiers. */
  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
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
