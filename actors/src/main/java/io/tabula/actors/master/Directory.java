package io.tabula.actors.master;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The master's whole state, and what it publishes to every node: the tables and, per table,
 * its tablets sorted by start row, covering every row exactly once. {@code version} grows
 * with every change, so a node keeps the newest copy it has seen. Immutable: every change
 * makes a new one (the metadata is small), so a copy can be handed to any thread.
 *
 * @param nextTabletNumber the number the next table's first tablet id gets
 */
public record Directory(long version, long nextTabletNumber, Map<String, TableInfo> tables,
    Map<String, List<TabletInfo>> tablets) implements KryoSerializable {
  public static final Directory EMPTY = new Directory(0, 1, Map.of(), Map.of());

  public Directory {
    tables = new TreeMap<>(tables);
    TreeMap<String, List<TabletInfo>> t = new TreeMap<>();
    tablets.forEach((k, v) -> t.put(k, List.copyOf(v)));
    tablets = t;
  }

  public TableInfo table(String name) {
    return tables.get(name);
  }

  /** The tablets of a table in row order; empty for an unknown table. */
  public List<TabletInfo> tabletsOf(String table) {
    return tablets.getOrDefault(table, List.of());
  }

  /** The tablet of {@code table} that holds {@code row}, or null for an unknown table. */
  public TabletInfo locate(String table, byte[] row) {
    List<TabletInfo> l = tabletsOf(table);
    int lo = 0;
    int hi = l.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      TabletInfo t = l.get(mid);
      if (ByteArrays.compare(row, t.startRow()) < 0) {
        hi = mid - 1;
      } else if (t.endRow().length > 0 && ByteArrays.compare(row, t.endRow()) >= 0) {
        lo = mid + 1;
      } else {
        return t;
      }
    }
    return null;
  }

  /**
   * The tablet of {@code table} holding the greatest rows below {@code end} (an empty end:
   * the last tablet), for reversed scans; null for an unknown table.
   */
  public TabletInfo locateBefore(String table, byte[] end) {
    List<TabletInfo> l = tabletsOf(table);
    if (l.isEmpty()) {
      return null;
    }
    if (end.length == 0) {
      return l.get(l.size() - 1);
    }
    for (TabletInfo t : l) {
      if (ByteArrays.compare(t.startRow(), end) < 0
          && (t.endRow().length == 0 || ByteArrays.compare(end, t.endRow()) <= 0)) {
        return t;
      }
    }
    return null;
  }

  /** The tablet of {@code table} with this id, or null. */
  public TabletInfo tablet(String table, String id) {
    for (TabletInfo t : tabletsOf(table)) {
      if (t.id().equals(id)) {
        return t;
      }
    }
    return null;
  }

  /** The tablet with this id in any table, or null. */
  public TabletInfo tablet(String id) {
    for (String table : tablets.keySet()) {
      TabletInfo t = tablet(table, id);
      if (t != null) {
        return t;
      }
    }
    return null;
  }

  Directory withTable(TableInfo table, List<TabletInfo> tabletsOfTable, long nextNumber) {
    Map<String, TableInfo> ts = new TreeMap<>(tables);
    ts.put(table.name(), table);
    Map<String, List<TabletInfo>> tl = new TreeMap<>(tablets);
    tl.put(table.name(), tabletsOfTable);
    return new Directory(version + 1, nextNumber, ts, tl);
  }

  Directory withoutTable(String name) {
    Map<String, TableInfo> ts = new TreeMap<>(tables);
    ts.remove(name);
    Map<String, List<TabletInfo>> tl = new TreeMap<>(tablets);
    tl.remove(name);
    return new Directory(version + 1, nextTabletNumber, ts, tl);
  }

  /** Replaces the tablet with id {@code oldId} by {@code replacements} (a split), keeping row order. */
  Directory withTabletReplaced(String table, String oldId, List<TabletInfo> replacements) {
    List<TabletInfo> l = new ArrayList<>();
    for (TabletInfo t : tabletsOf(table)) {
      if (t.id().equals(oldId)) {
        l.addAll(replacements);
      } else {
        l.add(t);
      }
    }
    return withTable(tables.get(table), l, nextTabletNumber);
  }
}
