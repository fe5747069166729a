package io.tabula.client.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the JSON a Tabula node's Management routes answer with, into maps (objects, in
 * order), lists, strings, doubles, booleans and null. Strict enough for those answers; a
 * malformed text throws {@link IllegalArgumentException} with the offset.
 */
final class MiniJson {
  private final String s;
  private int i;

  private MiniJson(String s) {
    this.s = s;
  }

  static Object parse(String text) {
    MiniJson p = new MiniJson(text);
    Object v = p.value();
    p.space();
    if (p.i != text.length()) {
      throw p.bad("trailing text");
    }
    return v;
  }

  private Object value() {
    space();
    if (i >= s.length()) {
      throw bad("unexpected end");
    }
    char c = s.charAt(i);
    switch (c) {
      case '{' -> {
        i++;
        Map<String, Object> m = new LinkedHashMap<>();
        space();
        if (peek('}')) {
          return m;
        }
        do {
          space();
          String k = string();
          space();
          expect(':');
          m.put(k, value());
          space();
        } while (peek(','));
        expect('}');
        return m;
      }
      case '[' -> {
        i++;
        List<Object> l = new ArrayList<>();
        space();
        if (peek(']')) {
          return l;
        }
        do {
          l.add(value());
          space();
        } while (peek(','));
        expect(']');
        return l;
      }
      case '"' -> {
        return string();
      }
      default -> {
        for (String word : List.of("true", "false", "null")) {
          if (s.startsWith(word, i)) {
            i += word.length();
            return word.equals("null") ? null : Boolean.valueOf(word);
          }
        }
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
          i++;
        }
        if (start == i) {
          throw bad("unexpected '" + c + "'");
        }
        return Double.valueOf(s.substring(start, i));
      }
    }
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (i < s.length() && s.charAt(i) != '"') {
      char c = s.charAt(i++);
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = s.charAt(i++);
      switch (e) {
        case 'n' -> out.append('\n');
        case 't' -> out.append('\t');
        case 'r' -> out.append('\r');
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'u' -> {
          out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        }
        default -> out.append(e);
      }
    }
    expect('"');
    return out.toString();
  }

  private void space() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }

  private boolean peek(char c) {
    if (i < s.length() && s.charAt(i) == c) {
      i++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw bad("expected '" + c + "'");
    }
  }

  private IllegalArgumentException bad(String why) {
    return new IllegalArgumentException("not JSON at offset " + i + ": " + why);
  }
}
