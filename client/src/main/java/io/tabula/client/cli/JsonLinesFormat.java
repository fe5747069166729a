package io.tabula.client.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.charset.CharacterCodingException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The JSON-lines files of {@code tabula import} and {@code tabula export} (UTF-8; see
 * docs/formats/import-export.md): one row per line, each exactly an object with a string
 * {@code key} and an object {@code cells} mapping {@code family:qualifier} to a string value:
 * <pre>
 * {"key":"com.cnn.www","cells":{"anchor:cnnsi.com":"CNN","contents:":"&lt;html&gt;"}}
 * </pre>
 * The reader is strict: members in either order but each exactly once, no other members,
 * string values only, at least one cell; JSON escapes including {@code \}{@code uXXXX}
 * surrogate pairs. Blank lines are skipped. A line that breaks a rule is reported with its
 * number and the column (character position) where reading stopped.
 */
final class JsonLinesFormat {
  private JsonLinesFormat() {}

  static RowFileReader reader(InputStream in) {
    return new Reader(new ByteInput(in));
  }

  static RowFileWriter writer(Writer out) {
    return row -> {
      StringBuilder s = new StringBuilder("{\"key\":");
      string(s, row.key());
      s.append(",\"cells\":{");
      boolean first = true;
      for (Map.Entry<String, String> c : row.cells().entrySet()) {
        if (!first) {
          s.append(',');
        }
        first = false;
        string(s, c.getKey());
        s.append(':');
        string(s, c.getValue());
      }
      out.write(s.append("}}\n").toString());
    };
  }

  private static void string(StringBuilder s, String text) {
    s.append('"');
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      switch (ch) {
        case '"' -> s.append("\\\"");
        case '\\' -> s.append("\\\\");
        case '\n' -> s.append("\\n");
        case '\r' -> s.append("\\r");
        case '\t' -> s.append("\\t");
        default -> {
          if (ch < 0x20 || ch == 0x7f || ch == '\u2028' || ch == '\u2029') {
            s.append(String.format("\\u%04x", (int) ch));
          } else {
            s.append(ch);
          }
        }
      }
    }
    s.append('"');
  }

  private static final class Reader extends RowFileReader {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private long line;

    Reader(ByteInput in) {
      super(in);
    }

    @Override
    TextRow next() throws IOException, BadLineException {
      String text;
      do {
        text = nextLine();
        if (text == null) {
          return null;
        }
      } while (text.isBlank());
      return new Parser(text, line).row();
    }

    /** The next line without its line break, or null at the end of the input. */
    private String nextLine() throws IOException, BadLineException {
      bytes.reset();
      int c = in.read();
      if (c < 0) {
        return null;
      }
      line++;
      while (c >= 0 && c != '\n') {
        bytes.write(c);
        c = in.read();
      }
      byte[] b = bytes.toByteArray();
      int len = b.length > 0 && b[b.length - 1] == '\r' ? b.length - 1 : b.length;
      try {
        return ByteInput.utf8(b, 0, len);
      } catch (CharacterCodingException e) {
        throw new BadLineException(line, "not valid UTF-8");
      }
    }

    @Override
    long line() {
      return line;
    }

  }

  /** A strict reader of one line's object. */
  private static final class Parser {
    private final String text;
    private final long line;
    private int pos;

    Parser(String text, long line) {
      this.text = text;
      this.line = line;
    }

    TextRow row() throws BadLineException {
      space();
      expect('{');
      String key = null;
      Map<String, String> cells = null;
      do {
        space();
        int at = pos;
        String name = string();
        space();
        expect(':');
        space();
        if (name.equals("key")) {
          if (key != null) {
            throw bad(at, "\"key\" appears twice");
          }
          if (peek() != '"') {
            throw bad(pos, "\"key\" must be a string");
          }
          key = string();
        } else if (name.equals("cells")) {
          if (cells != null) {
            throw bad(at, "\"cells\" appears twice");
          }
          cells = cells();
        } else {
          throw bad(at, "unknown member \"" + name + "\" (expected only \"key\" and \"cells\")");
        }
        space();
      } while (next(',', '}') == ',');
      space();
      if (pos < text.length()) {
        throw bad(pos, "unexpected text after the object");
      }
      if (key == null || cells == null) {
        throw bad(0, "the object needs both \"key\" and \"cells\"");
      }
      if (key.isEmpty()) {
        throw bad(0, "the row key is empty");
      }
      if (cells.isEmpty()) {
        throw bad(0, "row '" + key + "' has no cells");
      }
      return new TextRow(key, cells);
    }

    private Map<String, String> cells() throws BadLineException {
      if (peek() != '{') {
        throw bad(pos, "\"cells\" must be an object of \"family:qualifier\": \"value\"");
      }
      pos++;
      Map<String, String> cells = new LinkedHashMap<>();
      space();
      if (peek() == '}') {
        pos++;
        return cells;
      }
      do {
        space();
        int at = pos;
        String column = string();
        String problem = TextRow.checkColumn(column);
        if (problem != null) {
          throw bad(at, problem);
        }
        space();
        expect(':');
        space();
        if (peek() != '"') {
          throw bad(pos, "the value of \"" + column + "\" must be a string");
        }
        if (cells.put(column, string()) != null) {
          throw bad(at, "column \"" + column + "\" appears twice");
        }
        space();
      } while (next(',', '}') == ',');
      return cells;
    }

    private String string() throws BadLineException {
      expect('"');
      StringBuilder s = new StringBuilder();
      while (true) {
        if (pos >= text.length()) {
          throw bad(pos, "a string is not closed");
        }
        char ch = text.charAt(pos++);
        if (ch == '"') {
          return s.toString();
        }
        if (ch < 0x20) {
          throw bad(pos - 1, "a control character inside a string must be escaped");
        }
        if (ch != '\\') {
          s.append(ch);
          continue;
        }
        if (pos >= text.length()) {
          throw bad(pos, "a string is not closed");
        }
        char e = text.charAt(pos++);
        switch (e) {
          case '"', '\\', '/' -> s.append(e);
          case 'b' -> s.append('\b');
          case 'f' -> s.append('\f');
          case 'n' -> s.append('\n');
          case 'r' -> s.append('\r');
          case 't' -> s.append('\t');
          case 'u' -> s.append(unicode());
          default -> throw bad(pos - 2, "unknown escape \\" + e);
        }
      }
    }

    /** The character (or surrogate pair) of a {@code \}{@code uXXXX} escape whose 'u' was just read. */
    private String unicode() throws BadLineException {
      int at = pos - 2;
      char c = hex4();
      if (Character.isLowSurrogate(c)) {
        throw bad(at, "a lone low surrogate \\u" + Integer.toHexString(c) + " is not text");
      }
      if (!Character.isHighSurrogate(c)) {
        return String.valueOf(c);
      }
      if (!text.startsWith("\\u", pos)) {
        throw bad(at, "a high surrogate \\u" + Integer.toHexString(c) + " must be followed by a low one");
      }
      pos += 2;
      char low = hex4();
      if (!Character.isLowSurrogate(low)) {
        throw bad(at, "a high surrogate \\u" + Integer.toHexString(c) + " must be followed by a low one");
      }
      return new String(new char[] {c, low});
    }

    private char hex4() throws BadLineException {
      if (pos + 4 > text.length()) {
        throw bad(pos, "\\u needs four hex digits");
      }
      int v = 0;
      for (int i = 0; i < 4; i++) {
        int d = Character.digit(text.charAt(pos + i), 16);
        if (d < 0) {
          throw bad(pos, "\\u needs four hex digits");
        }
        v = v << 4 | d;
      }
      pos += 4;
      return (char) v;
    }

    private void space() {
      while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) {
        pos++;
      }
    }

    private int peek() {
      return pos < text.length() ? text.charAt(pos) : -1;
    }

    private void expect(char c) throws BadLineException {
      if (peek() != c) {
        throw bad(pos, "expected '" + c + "' but found " + found());
      }
      pos++;
    }

    /** Reads one of {@code a} or {@code b}, whichever is there. */
    private char next(char a, char b) throws BadLineException {
      int c = peek();
      if (c != a && c != b) {
        throw bad(pos, "expected '" + a + "' or '" + b + "' but found " + found());
      }
      pos++;
      return (char) c;
    }

    private String found() {
      return pos < text.length() ? "'" + text.charAt(pos) + "'" : "the end of the line";
    }

    private BadLineException bad(int at, String reason) {
      return new BadLineException(line, "column " + (at + 1) + ": " + reason);
    }
  }
}
