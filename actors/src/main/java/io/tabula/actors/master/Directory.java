package io.tabula.actors.master;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The master's whole state, and what it publishes to every node: the tables and, per table,
 * its tablets sorted by start row, covering every row exactly once, and where each tablet is
 * placed. {@code version} grows with every change, so a node keeps the newest copy it has
 * seen. Immutable: every change makes a new one (the metadata is small), so a copy can be
 * handed to any thread.
 *
 * @param nextTabletNumber the number the next table's first tablet id gets
 * @param placement by tablet id; a tablet without an entry is unassigned
 */
public record Directory(long version, long nextTabletNumber, Map<String, TableInfo> tables,
    Map<String, List<TabletInfo>> tablets, Map<String, TabletPlacement> placement) implements KryoSerializable {
  public static final Directory EMPTY = new Directory(0, 1, Map.of(), Map.of(), Map.of());

  public Directory {
    tables = TableInfo.upgrade(tables); // a snapshot from before locality groups holds LegacyTableInfo values
    TreeMap<String, List<TabletInfo>> t = new TreeMap<>();
    tablets.forEach((k, v) -> t.put(k, List.copyOf(v)));
    tablets = t;
    placement = new TreeMap<>(placement);
  }

  /** Where tablet {@code tabletId} is placed ({@link TabletPlacement#UNASSIGNED} if nowhere yet). */
  public TabletPlacement placementOf(String tabletId) {
    return placement.getOrDefault(tabletId, TabletPlacement.UNASSIGNED);
  }

  /** The owner node of tablet {@code tabletId}; empty if unassigned. */
  public String ownerOf(String tabletId) {
    return placementOf(tabletId).owner();
  }

  /** Every tablet of every table, tables by name and each table's in row order. */
  public List<TabletInfo> allTablets() {
    List<TabletInfo> all = new ArrayList<>();
    tablets.values().forEach(all::addAll);
    return all;
  }

  /** How many tablets each node owns (nodes owning none are absent). */
  public Map<String, Integer> tabletsPerNode() {
    Map<String, Integer> n = new TreeMap<>();
    for (TabletInfo t : allTablets()) {
      String owner = ownerOf(t.id());
      if (!owner.isEmpty()) {
        n.merge(owner, 1, Integer::sum);
      }
    }
    return n;
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
    return new Directory(version + 1, nextNumber, ts, tl, placement);
  }

  Directory withoutTable(String name) {
    Map<String, TableInfo> ts = new TreeMap<>(tables);
    ts.remove(name);
    Map<String, List<TabletInfo>> tl = new TreeMap<>(tablets);
    tl.remove(name);
    Map<String, TabletPlacement> p = new TreeMap<>(placement);
    tabletsOf(name).forEach(t -> p.remove(t.id()));
    return new Directory(version + 1, nextTabletNumber, ts, tl, p);
  }

  /**
   * Replaces the tablet with id {@code oldId} by {@code replacements} (a split or a merge),
   * keeping row order; the replacements take {@code placed} as their placement, and the
   * tablet replaced loses its own.
   */
  Directory withTabletReplaced(String table, String oldId, List<TabletInfo> replacements, TabletPlacement placed) {
    List<TabletInfo> l = new ArrayList<>();
    for (TabletInfo t : tabletsOf(table)) {
      if (t.id().equals(oldId)) {
        l.addAll(replacements);
      } else {
        l.add(t);
      }
    }
    Directory d = withTable(tables.get(table), l, nextTabletNumber);
    Map<String, TabletPlacement> p = new TreeMap<>(placement);
    p.remove(oldId);
    replacements.forEach(r -> p.put(r.id(), placed));
    return new Directory(d.version, d.nextTabletNumber, d.tables, d.tablets, p);
  }

  /** The same tablets, with tablet {@code oldId} replaced by {@code updated} (its files changed). */
  Directory withTabletUpdated(String table, String oldId, TabletInfo updated) {
    return withTabletReplaced(table, oldId, List.of(updated), placementOf(oldId));
  }

  /**
   * Replaces the adjacent tablets {@code leftId} and {@code rightId} by {@code child} (a
   * merge), which takes {@code placed} as its placement.
   */
  Directory withTabletsMerged(String table, String leftId, String rightId, TabletInfo child, TabletPlacement placed) {
    List<TabletInfo> l = new ArrayList<>();
    for (TabletInfo t : tabletsOf(table)) {
      if (t.id().equals(leftId)) {
        l.add(child);
      } else if (!t.id().equals(rightId)) {
        l.add(t);
      }
    }
    Directory d = withTable(tables.get(table), l, nextTabletNumber);
    Map<String, TabletPlacement> p = new TreeMap<>(placement);
    p.remove(leftId);
    p.remove(rightId);
    p.put(child.id(), placed);
    return new Directory(d.version, d.nextTabletNumber, d.tables, d.tablets, p);
  }

  /** With the placements in {@code changes} (by tablet id) set. */
  Directory withPlacements(Map<String, TabletPlacement> changes) {
    Map<String, TabletPlacement> p = new TreeMap<>(placement);
    p.putAll(changes);
    return new Directory(version + 1, nextTabletNumber, tables, tablets, p);
  }
}
