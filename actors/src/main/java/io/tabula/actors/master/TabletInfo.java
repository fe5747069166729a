package io.tabula.actors.master;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A tablet as the master records it (paper §5.1, the METADATA row): its table, id, row
 * range {@code [startRow, endRow)} (an empty end is unbounded), and the SSTables and redo
 * point it last reported. Immutable; the arrays must not be modified.
 */
public record TabletInfo(String table, String id, byte[] startRow, byte[] endRow, Map<String, List<String>> files,
    long redoPoint) implements KryoSerializable {
  public TabletInfo {
    files = new TreeMap<>(files);
  }

  public static TabletInfo empty(String table, String id, byte[] startRow, byte[] endRow) {
    return new TabletInfo(table, id, startRow, endRow, Map.of(), 0);
  }

  public boolean containsRow(byte[] row) {
    return ByteArrays.compare(row, startRow) >= 0 && (endRow.length == 0 || ByteArrays.compare(row, endRow) < 0);
  }

  public TabletInfo withFiles(Map<String, List<String>> newFiles, long newRedoPoint) {
    return new TabletInfo(table, id, startRow, endRow, newFiles, newRedoPoint);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TabletInfo t && table.equals(t.table) && id.equals(t.id)
        && java.util.Arrays.equals(startRow, t.startRow) && java.util.Arrays.equals(endRow, t.endRow)
        && files.equals(t.files) && redoPoint == t.redoPoint;
  }

  @Override
  public int hashCode() {
    return id.hashCode();
  }

  @Override
  public String toString() {
    return "Tablet(" + table + "/" + id + " [" + ByteArrays.show(startRow) + ", " + ByteArrays.show(endRow) + "))";
  }
}
