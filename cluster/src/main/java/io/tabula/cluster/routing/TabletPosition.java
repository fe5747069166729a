package io.tabula.cluster.routing;

import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.encoding.ByteArrays;

/**
 * Where a request's tablet is: the one holding {@code row}, or ({@code before}) the one holding
 * the greatest rows below {@code row}, an empty row meaning the table's last tablet (reversed
 * scans). Found in {@link TabletLocations}.
 */
public record TabletPosition(String table, byte[] row, boolean before) {
  public static TabletPosition of(String table, byte[] row) {
    return new TabletPosition(table, row, false);
  }

  /** Whether tablet {@code t} is the one at this position. */
  boolean heldBy(TabletInfo t) {
    if (!before) {
      return t.containsRow(row);
    }
    if (row.length == 0) {
      return t.endRow().length == 0;
    }
    return ByteArrays.compare(t.startRow(), row) < 0
        && (t.endRow().length == 0 || ByteArrays.compare(row, t.endRow()) <= 0);
  }
}
