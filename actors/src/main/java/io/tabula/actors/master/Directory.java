package io.tabula.actors.master;

import com.esotericsoftware.kryo.DefaultSerializer;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.pcollections.HashPMap;
import org.pcollections.HashTreePMap;
import org.pcollections.HashTreePSet;
import org.pcollections.MapPSet;
import org.pcollections.PVector;
import org.pcollections.TreePMap;
import org.pcollections.TreePVector;

/**
 * The master's whole state, and what it publishes to every node: the tables and, per table,
 * its tablets sorted by start row, covering every row exactly once, and where each tablet is
 * placed. {@code version} grows with every change, so a node keeps the newest copy it has
 * seen. Immutable, so a copy can be handed to any thread.
 *
 * <p>Its maps and lists are persistent (pcollections): a change makes a new directory that
 * shares all but O(log n) of its nodes with the old one, so a change costs O(log n) in time
 * and memory whatever the number of tablets (a table of 100,000 tablets whose every tablet
 * opens makes 100,000 changes). A tablet is found by id in O(log n) ({@link #tablet(String)},
 * through a hash index by id) and by row in O(log² n) ({@link #locate}); the tablets of one
 * node are listed without looking at the others' ({@link #tabletsOwnedBy}), so finding a dead
 * node's tablets costs what it owned, not what the cluster holds.
 *
 * <p>Its Kryo bytes (the master's snapshot, id 1063) are those of the record it was before:
 * {@link DirectoryBytes.Wire}, with {@code TreeMap}s and immutable lists (docs/formats/master-journal.md).
 */
@DefaultSerializer(DirectoryBytes.class)
public final class Directory implements KryoSerializable {
  public static final Directory EMPTY = new Directory(0, 1, Map.of(), Map.of(), Map.of());

  private final long version;
  private final long nextTabletNumber;
  private final TreePMap<String, TableInfo> tables;
  private final TreePMap<String, PVector<TabletInfo>> tablets;
  /** By tablet id; a tablet without an entry is unassigned. */
  private final HashPMap<String, TabletPlacement> placement;
  /** Every tablet of every table, by id. */
  private final HashPMap<String, TabletInfo> byId;
  /** The ids of every tablet by its owner's name; "" holds the unassigned ones. No empty sets. */
  private final HashPMap<String, MapPSet<String>> byOwner;
  /** The ids of the tablets whose placement is not {@code SERVING} (moving, merging). */
  private final MapPSet<String> unsettled;
  /** How many placements name each commit-log folder. */
  private final HashPMap<String, Integer> logUses;
  /** The sum of the hashes of every table, tablet and placement ({@link DirectoryDigest}). */
  private final long entries;
  /**
   * By node name: the sum of the hashes of the tablets, and their placements, that name it
   * ({@link TabletPlacement#nodes}): its share's part of {@link #shareDigest}. No zero sums.
   */
  private final HashPMap<String, Long> shares;

  /** The sums kept as a change is made ({@link #sumsAfter}). */
  private record Sums(long entries, HashPMap<String, Long> shares) {}

  /**
   * A directory of these tables, tablets (per table, in row order) and placements (by tablet
   * id); {@code nextTabletNumber} is the number the next table's first tablet id gets.
   */
  public Directory(long version, long nextTabletNumber, Map<String, ? extends Object> tables,
      Map<String, List<TabletInfo>> tablets, Map<String, TabletPlacement> placement) {
    this.version = version;
    this.nextTabletNumber = nextTabletNumber;
    // a snapshot from before locality groups holds LegacyTableInfo values
    this.tables = TreePMap.from(TableInfo.upgrade(tables));
    TreePMap<String, PVector<TabletInfo>> t = TreePMap.empty();
    java.util.HashMap<String, TabletInfo> ids = new java.util.HashMap<>();
    DirectoryIndexes x = new DirectoryIndexes(HashTreePMap.empty(), HashTreePSet.empty(), HashTreePMap.empty());
    for (Map.Entry<String, List<TabletInfo>> e : tablets.entrySet()) {
      t = t.plus(e.getKey(), TreePVector.from(e.getValue()));
      for (TabletInfo tablet : e.getValue()) {
        ids.put(tablet.id(), tablet);
        x.add(tablet.id(), placement.get(tablet.id()));
      }
    }
    this.tablets = t;
    this.placement = HashTreePMap.from(placement);
    this.byId = HashTreePMap.from(ids);
    this.byOwner = x.byOwner;
    this.unsettled = x.unsettled;
    this.logUses = x.logUses;
    long sum = DirectoryDigest.tablets(byId.values());
    for (TableInfo table : this.tables.values()) {
      sum += DirectoryDigest.table(table);
    }
    for (Map.Entry<String, TabletPlacement> p : this.placement.entrySet()) {
      sum += DirectoryDigest.placement(p.getKey(), p.getValue());
    }
    this.entries = sum;
    java.util.HashMap<String, Long> byNode = new java.util.HashMap<>();
    for (TabletInfo tablet : ids.values()) {
      TabletPlacement p = placement.get(tablet.id());
      if (p != null) {
        long h = DirectoryDigest.tablet(tablet) + DirectoryDigest.placement(tablet.id(), p);
        p.nodes().forEach(n -> byNode.merge(n, h, Long::sum));
      }
    }
    byNode.values().removeIf(v -> v == 0);
    this.shares = HashTreePMap.from(byNode);
  }

  private Directory(long version, long nextTabletNumber, TreePMap<String, TableInfo> tables,
      TreePMap<String, PVector<TabletInfo>> tablets, HashPMap<String, TabletPlacement> placement,
      HashPMap<String, TabletInfo> byId, DirectoryIndexes x, Sums sums) {
    this.version = version;
    this.nextTabletNumber = nextTabletNumber;
    this.tables = tables;
    this.tablets = tablets;
    this.placement = placement;
    this.byId = byId;
    this.byOwner = x.byOwner;
    this.unsettled = x.unsettled;
    this.logUses = x.logUses;
    this.entries = sums.entries();
    this.shares = sums.shares();
  }

  /**
   * A digest of this directory's content (its tables, tablets, placements and next tablet
   * number; not its version): two copies at one version with different digests differ.
   * Kept as the directory changes, so reading it costs nothing ({@link DirectoryDigest}).
   */
  public long digest() {
    return entries + DirectoryDigest.next(nextTabletNumber);
  }

  /**
   * The digest of node {@code node}'s share of this directory: the digest {@link #share}{@code
   * (node)} has, kept as the directory changes (work in proportion to the change).
   */
  public long shareDigest(String node) {
    return tablesDigest() + shareSum(node);
  }

  /** The part of every share's digest that is not its tablets': the tables' and the next tablet number's. */
  long tablesDigest() {
    long sum = DirectoryDigest.next(nextTabletNumber);
    for (TableInfo t : tables.values()) {
      sum += DirectoryDigest.table(t);
    }
    return sum;
  }

  /** The part of node {@code node}'s share digest that its tablets make (0: none). */
  long shareSum(String node) {
    return shares.getOrDefault(node, 0L);
  }

  /** The share sums of the nodes whose share has tablets ({@link #shareSum}); unmodifiable. */
  Map<String, Long> shareSums() {
    return shares;
  }

  /**
   * Node {@code node}'s share of this directory, at its version: every table, and the tablets
   * whose placement names the node (its owner, or the other end of a move), with their
   * placements. What a node needs of the directory for the tablets it serves; costs what the
   * share holds (the tablets the node owns, and those moving).
   */
  public Directory share(String node) {
    Map<String, List<TabletInfo>> mine = new java.util.HashMap<>();
    Map<String, TabletPlacement> placed = new java.util.HashMap<>();
    for (java.util.Set<String> ids : List.of(tabletsOwnedBy(node), unsettled)) {
      for (String id : ids) {
        TabletInfo t = byId.get(id);
        TabletPlacement p = placement.get(id);
        if (t != null && p != null && p.nodes().contains(node) && placed.put(id, p) == null) {
          mine.computeIfAbsent(t.table(), k -> new ArrayList<>()).add(t);
        }
      }
    }
    mine.values().forEach(l -> l.sort((a, b) -> ByteArrays.compare(a.startRow(), b.startRow())));
    return new Directory(version, nextTabletNumber, tables, mine, placed);
  }

  private Sums sums() {
    return new Sums(entries, shares);
  }

  /** The same directory at the next version: an event that found nothing to change here. */
  Directory bumped() {
    return new Directory(version + 1, nextTabletNumber, tables, tablets, placement, byId, indexes(), sums());
  }

  /**
   * For a node's share: with {@code tablet} added, placed as {@code placed} (none if null), at
   * this same version; unchanged if it has a tablet of that id already.
   */
  Directory withShareTablet(TabletInfo tablet, TabletPlacement placed) {
    if (byId.containsKey(tablet.id()) || !tables.containsKey(tablet.table())) {
      return this;
    }
    PVector<TabletInfo> l = tablets.getOrDefault(tablet.table(), TreePVector.empty());
    int lo = 0;
    int hi = l.size();
    while (lo < hi) { // the first tablet starting after it
      int mid = (lo + hi) >>> 1;
      if (ByteArrays.compare(l.get(mid).startRow(), tablet.startRow()) <= 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    HashPMap<String, TabletInfo> ids = byId.plus(tablet.id(), tablet);
    HashPMap<String, TabletPlacement> p = placed == null ? placement : placement.plus(tablet.id(), placed);
    DirectoryIndexes x = indexes();
    x.add(tablet.id(), placed);
    return new Directory(version, nextTabletNumber, tables, tablets.plus(tablet.table(), l.plus(lo, tablet)), p, ids,
        x, sumsAfter(List.of(tablet.id()), ids, p, null, null));
  }

  /**
   * For a node's share: without the tablets whose placement does not name {@code node}, at this
   * same version. Looks at those owned by others or none: in a share, what a change just moved.
   */
  Directory keptShareOf(String node) {
    List<String> drop = new ArrayList<>();
    byOwner.forEach((owner, ids) -> {
      if (!owner.equals(node)) {
        ids.stream().filter(id -> !placementOf(id).nodes().contains(node)).forEach(drop::add);
      }
    });
    if (drop.isEmpty()) {
      return this;
    }
    TreePMap<String, PVector<TabletInfo>> t = tablets;
    DirectoryIndexes x = indexes();
    for (String id : drop) {
      TabletInfo tablet = byId.get(id);
      if (tablet != null) {
        PVector<TabletInfo> l = t.get(tablet.table()).minus(indexOf(t.get(tablet.table()), tablet));
        t = l.isEmpty() ? t.minus(tablet.table()) : t.plus(tablet.table(), l);
      }
      x.remove(id, placement.get(id));
    }
    HashPMap<String, TabletInfo> ids = byId.minusAll(drop);
    HashPMap<String, TabletPlacement> p = placement.minusAll(drop);
    return new Directory(version, nextTabletNumber, tables, t, p, ids, x, sumsAfter(drop, ids, p, null, null));
  }

  /**
   * The sums once the tablets and placements of {@code ids} (and table {@code table}, if not
   * null) go from this directory's to those in the maps given.
   */
  private Sums sumsAfter(Collection<String> ids, Map<String, TabletInfo> newById,
      Map<String, TabletPlacement> newPlacement, String table, TableInfo newTable) {
    long sum = entries;
    java.util.HashMap<String, Long> byNode = new java.util.HashMap<>();
    for (String id : new java.util.HashSet<>(ids)) {
      TabletInfo wasTablet = byId.get(id);
      TabletInfo nowTablet = newById.get(id);
      TabletPlacement was = placement.get(id);
      TabletPlacement now = newPlacement.get(id);
      sum += DirectoryDigest.tablet(nowTablet) - DirectoryDigest.tablet(wasTablet);
      sum += DirectoryDigest.placement(id, now) - DirectoryDigest.placement(id, was);
      if (wasTablet != null && was != null) {
        long h = DirectoryDigest.tablet(wasTablet) + DirectoryDigest.placement(id, was);
        was.nodes().forEach(n -> byNode.merge(n, -h, Long::sum));
      }
      if (nowTablet != null && now != null) {
        long h = DirectoryDigest.tablet(nowTablet) + DirectoryDigest.placement(id, now);
        now.nodes().forEach(n -> byNode.merge(n, h, Long::sum));
      }
    }
    if (table != null) {
      sum += DirectoryDigest.table(newTable) - DirectoryDigest.table(tables.get(table));
    }
    HashPMap<String, Long> s = shares;
    for (Map.Entry<String, Long> d : byNode.entrySet()) {
      long v = s.getOrDefault(d.getKey(), 0L) + d.getValue();
      s = v == 0 ? s.minus(d.getKey()) : s.plus(d.getKey(), v);
    }
    return new Sums(sum, s);
  }

  private DirectoryIndexes indexes() {
    return new DirectoryIndexes(byOwner, unsettled, logUses);
  }

  public long version() {
    return version;
  }

  /** The number the next table's first tablet id gets. */
  public long nextTabletNumber() {
    return nextTabletNumber;
  }

  /** The tables by name (unmodifiable). */
  public Map<String, TableInfo> tables() {
    return tables;
  }

  /** Each table's tablets in row order, by table name (unmodifiable). */
  public Map<String, List<TabletInfo>> tablets() {
    return java.util.Collections.unmodifiableMap(tablets);
  }

  /** Placements by tablet id (unmodifiable); a tablet without an entry is unassigned. */
  public Map<String, TabletPlacement> placement() {
    return placement;
  }

  /** How many tablets all tables have together. */
  public int tabletCount() {
    return byId.size();
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
    List<TabletInfo> all = new ArrayList<>(byId.size());
    tablets.values().forEach(all::addAll);
    return all;
  }

  /** How many tablets each node owns (nodes owning none are absent). */
  public Map<String, Integer> tabletsPerNode() {
    Map<String, Integer> n = new TreeMap<>();
    byOwner.forEach((owner, ids) -> {
      if (!owner.isEmpty()) {
        n.put(owner, ids.size());
      }
    });
    return n;
  }

  /** The ids of the tablets node {@code owner} owns ("": the unassigned ones); unmodifiable. */
  public java.util.Set<String> tabletsOwnedBy(String owner) {
    return byOwner.getOrDefault(owner, HashTreePSet.empty());
  }

  /** The ids of the tablets moving or merging (placement not {@code SERVING}); unmodifiable. */
  public java.util.Set<String> unsettledTablets() {
    return unsettled;
  }

  /** Whether a placement names commit-log folder {@code log} (its tablet's next owner replays it). */
  public boolean namesLog(String log) {
    return logUses.containsKey(log);
  }

  /** The names of the nodes owning a tablet, and "" if a tablet is unassigned; unmodifiable. */
  public java.util.Set<String> owners() {
    return java.util.Collections.unmodifiableSet(byOwner.keySet());
  }

  public TableInfo table(String name) {
    return tables.get(name);
  }

  /** The tablets of a table in row order; empty for an unknown table. */
  public List<TabletInfo> tabletsOf(String table) {
    return tablets.getOrDefault(table, TreePVector.empty());
  }

  /** The tablet of {@code table} that holds {@code row}, or null for an unknown table. */
  public TabletInfo locate(String table, byte[] row) {
    int i = indexOf(table, row);
    return i < 0 ? null : tabletsOf(table).get(i);
  }

  /**
   * The position in {@link #tabletsOf} of the tablet of {@code table} that holds {@code row}
   * (a binary search), or -1 for an unknown table.
   */
  public int indexOf(String table, byte[] row) {
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
        return mid;
      }
    }
    return -1;
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
    // the last tablet starting below end
    int lo = 0;
    int hi = l.size() - 1;
    int found = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (ByteArrays.compare(l.get(mid).startRow(), end) < 0) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found < 0) {
      return null;
    }
    TabletInfo t = l.get(found);
    return t.endRow().length == 0 || ByteArrays.compare(end, t.endRow()) <= 0 ? t : null;
  }

  /** The tablet of {@code table} with this id, or null. */
  public TabletInfo tablet(String table, String id) {
    TabletInfo t = byId.get(id);
    return t != null && t.table().equals(table) ? t : null;
  }

  /** The tablet with this id in any table, or null. */
  public TabletInfo tablet(String id) {
    return byId.get(id);
  }

  Directory withTable(TableInfo table, List<TabletInfo> tabletsOfTable, long nextNumber) {
    DirectoryIndexes x = indexes();
    for (TabletInfo t : tabletsOf(table.name())) {
      x.remove(t.id(), placement.get(t.id()));
    }
    HashPMap<String, TabletInfo> ids = byId.minusAll(idsOf(tabletsOf(table.name())));
    List<String> touched = idsOf(tabletsOf(table.name()));
    for (TabletInfo t : tabletsOfTable) {
      ids = ids.plus(t.id(), t);
      x.add(t.id(), placement.get(t.id()));
      touched.add(t.id());
    }
    return new Directory(version + 1, nextNumber, tables.plus(table.name(), table),
        tablets.plus(table.name(), TreePVector.from(tabletsOfTable)), placement, ids, x,
        sumsAfter(touched, ids, placement, table.name(), table));
  }

  /** The same tablets, with table {@code table}'s own settings (families, groups) replaced. */
  Directory withTableInfo(TableInfo table) {
    return new Directory(version + 1, nextTabletNumber, tables.plus(table.name(), table), tablets, placement, byId,
        indexes(), sumsAfter(List.of(), byId, placement, table.name(), table));
  }

  Directory withoutTable(String name) {
    List<String> ids = idsOf(tabletsOf(name));
    DirectoryIndexes x = indexes();
    for (String id : ids) {
      x.remove(id, placement.get(id));
    }
    HashPMap<String, TabletPlacement> p = placement.minusAll(ids);
    HashPMap<String, TabletInfo> left = byId.minusAll(ids);
    return new Directory(version + 1, nextTabletNumber, tables.minus(name), tablets.minus(name), p, left, x,
        sumsAfter(ids, left, p, name, null));
  }

  private static List<String> idsOf(Collection<TabletInfo> ts) {
    List<String> ids = new ArrayList<>(ts.size());
    ts.forEach(t -> ids.add(t.id()));
    return ids;
  }

  /** The index of {@code t} in its table's tablets (found by its start row), or -1. */
  private int indexOf(TabletInfo t) {
    return indexOf(tabletsOf(t.table()), t);
  }

  /** The index of {@code t} in {@code l}, tablets in row order (found by its start row), or -1. */
  private static int indexOf(List<TabletInfo> l, TabletInfo t) {
    int lo = 0;
    int hi = l.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = ByteArrays.compare(l.get(mid).startRow(), t.startRow());
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return l.get(mid).id().equals(t.id()) ? mid : -1;
      }
    }
    return -1;
  }

  /**
   * Replaces the tablet with id {@code oldId} by {@code replacements} (a split or a merge),
   * keeping row order; the replacements take {@code placed} as their placement, and the
   * tablet replaced loses its own.
   */
  Directory withTabletReplaced(String table, String oldId, List<TabletInfo> replacements, TabletPlacement placed) {
    TabletInfo old = tablet(table, oldId);
    if (old == null) {
      return bumped();
    }
    int at = indexOf(old);
    PVector<TabletInfo> l = tablets.get(table).minus(at).plusAll(at, replacements);
    HashPMap<String, TabletInfo> ids = byId.minus(oldId);
    HashPMap<String, TabletPlacement> p = placement.minus(oldId);
    DirectoryIndexes x = indexes();
    x.remove(oldId, placement.get(oldId));
    List<String> touched = new ArrayList<>(List.of(oldId));
    for (TabletInfo r : replacements) {
      touched.add(r.id());
      if (!r.id().equals(oldId)) {
        x.remove(r.id(), placement.get(r.id()));
      }
      ids = ids.plus(r.id(), r);
      p = p.plus(r.id(), placed);
      x.add(r.id(), placed);
    }
    return new Directory(version + 1, nextTabletNumber, tables, tablets.plus(table, l), p, ids, x,
        sumsAfter(touched, ids, p, null, null));
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
    TabletInfo left = tablet(table, leftId);
    TabletInfo right = tablet(table, rightId);
    PVector<TabletInfo> l = tablets.get(table);
    if (right != null) {
      l = l.minus(indexOf(right));
    }
    if (left != null) {
      int at = indexOf(left);
      l = l.minus(at).plus(at, child);
    }
    HashPMap<String, TabletPlacement> p = placement.minus(leftId).minus(rightId).plus(child.id(), placed);
    DirectoryIndexes x = indexes();
    x.remove(leftId, placement.get(leftId));
    x.remove(rightId, placement.get(rightId));
    x.remove(child.id(), placement.get(child.id()));
    x.add(child.id(), placed);
    HashPMap<String, TabletInfo> ids = byId.minus(leftId).minus(rightId).plus(child.id(), child);
    return new Directory(version + 1, nextTabletNumber, tables, tablets.plus(table, l), p, ids, x,
        sumsAfter(List.of(leftId, rightId, child.id()), ids, p, null, null));
  }

  /** With the placements in {@code changes} (by tablet id) set. */
  Directory withPlacements(Map<String, TabletPlacement> changes) {
    DirectoryIndexes x = indexes();
    for (Map.Entry<String, TabletPlacement> c : changes.entrySet()) {
      if (byId.containsKey(c.getKey())) {
        x.replace(c.getKey(), placement.get(c.getKey()), c.getValue());
      }
    }
    HashPMap<String, TabletPlacement> p = placement.plusAll(changes);
    return new Directory(version + 1, nextTabletNumber, tables, tablets, p, byId, x,
        sumsAfter(changes.keySet(), byId, p, null, null));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Directory d && version == d.version && nextTabletNumber == d.nextTabletNumber
        && tables.equals(d.tables) && tablets.equals(d.tablets) && placement.equals(d.placement);
  }

  @Override
  public int hashCode() {
    return Objects.hash(version, nextTabletNumber, tables.size(), byId.size());
  }

  @Override
  public String toString() {
    return "Directory(version " + version + ", " + tables.size() + " tables, " + byId.size() + " tablets)";
  }
}
