package io.tabula.client.cli;

import com.google.protobuf.ByteString;
import io.tabula.client.Cell;
import io.tabula.client.Row;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Prints rows as {@code cbt read} does: a line of dashes, the row key, then for each cell
 * its column and timestamp and, on the next line, its value quoted. Timestamps are shown
 * in UTC with microseconds:
 * <pre>
 * ----------------------------------------
 * com.cnn.www
 *   anchor:cnnsi.com                         @ 2024/05/01-12:00:00.000000
 *     "CNN"
 * </pre>
 */
final class RowPrinter {
  private static final String DASHES = "-".repeat(40);
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu/MM/dd-HH:mm:ss.SSSSSS")
      .withZone(ZoneOffset.UTC);

  private final PrintWriter out;

  RowPrinter(PrintWriter out) {
    this.out = out;
  }

  void print(Row row) {
    out.println(DASHES);
    out.println(row.keyUtf8());
    for (Cell c : row.cells()) {
      out.println(String.format("  %-40s @ %s", c.family() + ":" + c.qualifierUtf8(), time(c.timestampMicros())));
      out.println("    " + quote(c.value()));
    }
  }

  static String time(long micros) {
    return TIME.format(Instant.EPOCH.plusSeconds(Math.floorDiv(micros, 1_000_000L))
        .plusNanos(Math.floorMod(micros, 1_000_000L) * 1_000L));
  }

  /**
   * The value in double quotes the way Go's {@code %q} writes it: printable text as it is,
   * quote and backslash escaped, control characters as {@code \n}, {@code \t}, {@code \r}
   * or {@code \xHH}, and bytes that are not UTF-8 as {@code \xHH}.
   */
  static String quote(ByteString value) {
    byte[] b = value.toByteArray();
    StringBuilder s = new StringBuilder(b.length + 2).append('"');
    int i = 0;
    while (i < b.length) {
      int len = utf8Length(b, i);
      if (len == 0) {
        s.append(String.format("\\x%02x", b[i] & 0xff));
        i++;
        continue;
      }
      int cp = new String(b, i, len, java.nio.charset.StandardCharsets.UTF_8).codePointAt(0);
      i += len;
      switch (cp) {
        case '"' -> s.append("\\\"");
        case '\\' -> s.append("\\\\");
        case '\n' -> s.append("\\n");
        case '\t' -> s.append("\\t");
        case '\r' -> s.append("\\r");
        default -> {
          if (cp < 0x20 || cp == 0x7f) {
            s.append(String.format("\\x%02x", cp));
          } else if (Character.isISOControl(cp) || !Character.isDefined(cp)) {
            s.append(cp <= 0xffff ? String.format("\\u%04x", cp) : String.format("\\U%08x", cp));
          } else {
            s.appendCodePoint(cp);
          }
        }
      }
    }
    return s.append('"').toString();
  }

  /** The length of the well-formed UTF-8 sequence starting at {@code i}, or 0 if there is none. */
  private static int utf8Length(byte[] b, int i) {
    int lead = b[i] & 0xff;
    int len;
    int min;
    if (lead < 0x80) {
      return 1;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      len = 2;
      min = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      len = 3;
      min = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      len = 4;
      min = 0x10000;
    } else {
      return 0;
    }
    if (i + len > b.length) {
      return 0;
    }
    int cp = lead & (0xff >> (len + 1));
    for (int k = 1; k < len; k++) {
      int c = b[i + k] & 0xff;
      if ((c & 0xc0) != 0x80) {
        return 0;
      }
      cp = cp << 6 | c & 0x3f;
    }
    boolean surrogate = cp >= 0xd800 && cp <= 0xdfff;
    return cp < min || cp > 0x10ffff || surrogate ? 0 : len;
  }
}
