package io.tabula.client.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.charset.CharacterCodingException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The CSV files of {@code tabula import} and {@code tabula export} (RFC 4180, UTF-8; see
 * docs/formats/import-export.md):
 * <pre>
 * file   := header record*
 * header := keyname ("," column)+ EOL        column := family ":" qualifier
 * record := key ("," value)* EOL             one value per column of the header
 * field  := unquoted | '"' (any | '""')* '"' EOL := CRLF | LF (optional after the last record)
 * </pre>
 * The first column holds the row key (its header name is free, e.g. {@code rowkey}). An
 * unquoted empty field means the row has no cell in that column; a quoted empty field
 * {@code ""} is a cell whose value is empty, so export and import round-trip. Quoted fields
 * may hold commas, doubled quotes and line breaks. Blank lines are skipped; a leading
 * UTF-8 byte-order mark is ignored.
 */
final class CsvFormat {
  private CsvFormat() {}

  /** Reads the header of {@code in}; a header that cannot be read fails the whole import. */
  static RowFileReader reader(InputStream in) throws IOException, BadLineException {
    return new Reader(new ByteInput(in));
  }

  /** A writer of {@code columns}; writes the header at once. */
  static RowFileWriter writer(Writer out, List<String> columns) throws IOException {
    return new CsvWriter(out, columns);
  }

  /** One field as read: its text and whether it was quoted. */
  private record Field(String text, boolean quoted) {}

  private static final class Reader extends RowFileReader {
    private final List<String> columns;
    private final ByteArrayOutputStream field = new ByteArrayOutputStream();
    private long line = 1;
    private long recordLine;

    Reader(ByteInput in) throws IOException, BadLineException {
      super(in);
      if (in.peek() == 0xef) {
        skipByteOrderMark();
      }
      List<Field> header = record();
      while (header != null && blank(header)) {
        header = record();
      }
      if (header == null) {
        throw new BadLineException(line, "the file is empty; it needs a header such as rowkey,family:qualifier");
      }
      if (header.size() < 2) {
        throw new BadLineException(recordLine, "the header names no columns after the row key "
            + "(expected e.g. rowkey,family:qualifier)");
      }
      columns = new ArrayList<>();
      Set<String> seen = new HashSet<>();
      for (Field f : header.subList(1, header.size())) {
        String problem = TextRow.checkColumn(f.text());
        if (problem != null) {
          throw new BadLineException(recordLine, "header: " + problem);
        }
        if (!seen.add(f.text())) {
          throw new BadLineException(recordLine, "header: column '" + f.text() + "' appears twice");
        }
        columns.add(f.text());
      }
    }

    @Override
    TextRow next() throws IOException, BadLineException {
      List<Field> fields;
      do {
        fields = record();
        if (fields == null) {
          return null;
        }
      } while (blank(fields));
      if (fields.size() != columns.size() + 1) {
        throw new BadLineException(recordLine, fields.size() + (fields.size() == 1 ? " field" : " fields")
            + ", but the header has " + (columns.size() + 1));
      }
      String key = fields.get(0).text();
      if (key.isEmpty()) {
        throw new BadLineException(recordLine, "the row key (first field) is empty");
      }
      Map<String, String> cells = new LinkedHashMap<>();
      for (int i = 1; i < fields.size(); i++) {
        Field f = fields.get(i);
        if (f.quoted() || !f.text().isEmpty()) {
          cells.put(columns.get(i - 1), f.text());
        }
      }
      if (cells.isEmpty()) {
        throw new BadLineException(recordLine, "row '" + key + "' has no cells (every field after the key is empty; "
            + "write \"\" for an empty value)");
      }
      return new TextRow(key, cells);
    }

    @Override
    long line() {
      return recordLine;
    }

    private static boolean blank(List<Field> fields) {
      return fields.size() == 1 && !fields.get(0).quoted() && fields.get(0).text().isEmpty();
    }

    private void skipByteOrderMark() throws IOException, BadLineException {
      in.read();
      if (in.read() != 0xbb || in.read() != 0xbf) {
        throw new BadLineException(1, "not valid UTF-8 (a byte 0xEF that does not start a byte-order mark)");
      }
    }

    /** The next record's fields, or null at the end of the input. */
    private List<Field> record() throws IOException, BadLineException {
      recordLine = line;
      int c = in.read();
      if (c < 0) {
        return null;
      }
      List<Field> fields = new ArrayList<>();
      int notUtf8 = 0;
      while (true) {
        field.reset();
        boolean quoted = c == '"';
        if (quoted) {
          c = quotedField();
          if (c != ',' && c != '\n' && c != '\r' && c >= 0) {
            throw bad("unexpected " + shown(c) + " after the closing quote of field " + (fields.size() + 1)
                + " (a quote inside a quoted field is written \"\")");
          }
        } else {
          while (c != ',' && c != '\n' && c != '\r' && c >= 0) {
            if (c == '"') {
              throw bad("a quote inside unquoted field " + (fields.size() + 1)
                  + " (quote the whole field and double the quote)");
            }
            field.write(c);
            c = in.read();
          }
        }
        String text = text();
        if (text == null && notUtf8 == 0) {
          notUtf8 = fields.size() + 1;
        }
        fields.add(new Field(text, quoted));
        if (c == ',') {
          c = in.read();
          continue;
        }
        if (c == '\r' && in.read() != '\n') {
          throw bad("a carriage return that is not followed by a line feed");
        }
        if (c == '\r' || c == '\n') {
          line++;
        }
        if (notUtf8 > 0) {
          throw new BadLineException(recordLine, "field " + notUtf8 + " is not valid UTF-8");
        }
        return fields;
      }
    }

    private static String shown(int b) {
      return b > 0x20 && b < 0x7f ? "'" + (char) b + "'" : String.format("byte 0x%02X", b);
    }

    /** Reads a quoted field after its opening quote; returns the byte after its closing quote. */
    private int quotedField() throws IOException, BadLineException {
      while (true) {
        int c = in.read();
        if (c < 0) {
          throw new BadLineException(recordLine, "a quoted field is not closed before the end of the file");
        }
        if (c == '"') {
          c = in.read();
          if (c != '"') {
            return c;
          }
        } else if (c == '\n') {
          line++;
        }
        field.write(c);
      }
    }

    /** The field read, or null if it is not UTF-8 (reported once the record has been read to its end). */
    private String text() {
      try {
        return ByteInput.utf8(field.toByteArray(), 0, field.size());
      } catch (CharacterCodingException e) {
        return null;
      }
    }

    /** A bad record: skips the rest of its line so that reading can go on with the next. */
    private BadLineException bad(String reason) throws IOException {
      long at = recordLine;
      int c = in.read();
      while (c >= 0 && c != '\n') {
        c = in.read();
      }
      if (c == '\n') {
        line++;
      }
      return new BadLineException(at, reason);
    }
  }

  private static final class CsvWriter implements RowFileWriter {
    private final Writer out;
    private final List<String> columns;
    private final Set<String> known;

    CsvWriter(Writer out, List<String> columns) throws IOException {
      this.out = out;
      this.columns = List.copyOf(columns);
      this.known = Set.copyOf(columns);
      StringBuilder s = new StringBuilder("rowkey");
      for (String c : columns) {
        s.append(',').append(field(c));
      }
      out.write(s.append("\r\n").toString());
    }

    @Override
    public void write(TextRow row) throws IOException {
      StringBuilder s = new StringBuilder(field(row.key()));
      for (String c : columns) {
        String v = row.cells().get(c);
        s.append(',');
        if (v != null) {
          s.append(v.isEmpty() ? "\"\"" : field(v));
        }
      }
      for (String c : row.cells().keySet()) {
        if (!known.contains(c)) {
          throw new CommandFailedException("row " + row.key() + " has column " + c + ", which appeared after the "
              + "columns were listed (the table changed during the export; export again, or use --format jsonl)");
        }
      }
      out.write(s.append("\r\n").toString());
    }

    private static String field(String text) {
      boolean quote = false;
      for (int i = 0; i < text.length() && !quote; i++) {
        char ch = text.charAt(i);
        quote = ch == ',' || ch == '"' || ch == '\r' || ch == '\n';
      }
      return quote ? '"' + text.replace("\"", "\"\"") + '"' : text;
    }
  }
}
