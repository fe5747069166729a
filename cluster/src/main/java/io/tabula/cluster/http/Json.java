package io.tabula.cluster.http;

import java.util.Collection;
import java.util.Map;

/**
 * The few JSON shapes Tabula's Management routes answer with: objects of strings, numbers,
 * booleans, nested objects and lists, written in the order given. Strings are escaped as
 * RFC 8259 requires.
 */
final class Json {
  private Json() {}

  static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object v, StringBuilder out) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof Number || v instanceof Boolean) {
      out.append(v);
    } else if (v instanceof Map<?, ?> m) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(String.valueOf(e.getKey()), out);
        out.append(':');
        write(e.getValue(), out);
      }
      out.append('}');
    } else if (v instanceof Collection<?> c) {
      out.append('[');
      boolean first = true;
      for (Object o : c) {
        if (!first) {
          out.append(',');
        }
        first = false;
        write(o, out);
      }
      out.append(']');
    } else {
      string(v.toString(), out);
    }
  }

  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
