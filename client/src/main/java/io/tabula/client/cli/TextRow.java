package io.tabula.client.cli;

import io.tabula.client.Cell;
import io.tabula.client.Row;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One row as the import and export files carry it: the key and, per column named
 * {@code family:qualifier}, one value, all as text. Export writes the newest version of
 * each column; timestamps are not carried. Immutable.
 */
record TextRow(String key, Map<String, String> cells) {
  TextRow {
    cells = Collections.unmodifiableMap(new LinkedHashMap<>(cells));
  }

  /** The column name {@code family:qualifier} of a cell of {@code row}; fails if the qualifier is not text. */
  static String column(Row row, Cell c) {
    if (!c.qualifier().isValidUtf8()) {
      throw notText(row, c.family() + ":" + RowPrinter.quote(c.qualifier()));
    }
    return c.family() + ":" + c.qualifierUtf8();
  }

  /** The family part of a column name (everything before the first ':'). */
  static String family(String column) {
    return column.substring(0, column.indexOf(':'));
  }

  /** The qualifier part of a column name (everything after the first ':'). */
  static String qualifier(String column) {
    return column.substring(column.indexOf(':') + 1);
  }

  /** Why {@code column} cannot name a column, or null if it can: it needs a family and a ':'. */
  static String checkColumn(String column) {
    int colon = column.indexOf(':');
    if (colon < 0) {
      return "column '" + column + "' is not of the form family:qualifier";
    }
    return colon == 0 ? "column '" + column + "' has no family" : null;
  }

  /**
   * The newest value of each column of {@code row}; fails naming the row if its key, a
   * qualifier or a value is not UTF-8 text, which these files cannot carry.
   */
  static TextRow of(Row row) {
    if (!row.key().isValidUtf8()) {
      throw notText(row, "the key");
    }
    Map<String, String> cells = new LinkedHashMap<>();
    for (Cell c : row.cells()) {
      String column = column(row, c);
      if (!c.value().isValidUtf8()) {
        throw notText(row, "the value of " + column);
      }
      cells.putIfAbsent(column, c.valueUtf8());
    }
    return new TextRow(row.keyUtf8(), cells);
  }

  private static CommandFailedException notText(Row row, String what) {
    return new CommandFailedException("row " + RowPrinter.quote(row.key()) + ": " + what
        + " is not UTF-8 text, which the export formats cannot carry");
  }
}
