package io.tabula.actors.master;

import io.tabula.actors.master.Master.FamilyChange;
import io.tabula.actors.master.Master.LocalityGroupsChanged;
import io.tabula.actors.master.Master.SetLocalityGroup;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.Refused;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The checks and outcomes of the master's commands that make a table or change its schema:
 * each gives the event to persist or throws {@link Refused}, and changes nothing itself.
 */
final class TableChanges {
  /**
   * The most locality groups a table may have, the default one included: each group is a set
   * of SSTables in every tablet, flushed and merged on its own.
   */
  static final int MAX_GROUPS = 16;

  private TableChanges() {}

  /**
   * A new table {@code table} with one tablet per range between its sorted, distinct, non-empty
   * {@code splits}, numbered from {@code firstNumber} ({@link TabletIds#numbered}).
   */
  static Master.TableCreated create(TableInfo table, List<byte[]> splits, long firstNumber) {
    List<byte[]> sorted = new java.util.ArrayList<>(splits);
    sorted.sort(io.tabula.persistence.encoding.ByteArrays::compare);
    List<TabletInfo> tablets = new java.util.ArrayList<>();
    long n = firstNumber;
    byte[] start = new byte[0];
    for (byte[] s : sorted) {
      if (s.length == 0 || java.util.Arrays.equals(s, start)) {
        continue;
      }
      tablets.add(TabletInfo.empty(table.name(), TabletIds.numbered(table.name(), n++), start, s));
      start = s;
    }
    tablets.add(TabletInfo.empty(table.name(), TabletIds.numbered(table.name(), n++), start, new byte[0]));
    return new Master.TableCreated(table, tablets, n);
  }

  /**
   * The table {@code c} restores (made at {@code nowMicros}): refused if a table of its name
   * exists, if a tablet's id is another's, or if its tablets do not cover every row once, in
   * row order.
   */
  static Master.TableCreated restored(Directory d, Master.CreateRestoredTable c, long nowMicros) {
    TableInfo t = c.table();
    if (d.table(t.name()) != null) {
      throw refused(ErrorCode.ALREADY_EXISTS, "table " + t.name() + " already exists");
    }
    byte[] next = new byte[0];
    for (int i = 0; i < c.tablets().size(); i++) {
      TabletInfo ti = c.tablets().get(i);
      if (!ti.table().equals(t.name()) || !java.util.Arrays.equals(ti.startRow(), next) || (i > 0 && next.length == 0)
          || d.tablet(ti.id()) != null) {
        throw refused(ErrorCode.INVALID_ARGUMENT, "the restored tablets of table " + t.name() + " do not cover"
            + " every row once with fresh ids (tablet " + i + ", " + ti.id() + ")");
      }
      next = ti.endRow();
    }
    if (c.tablets().isEmpty() || next.length != 0) {
      throw refused(ErrorCode.INVALID_ARGUMENT, "the restored tablets of table " + t.name() + " end before the"
          + " last row");
    }
    return new Master.TableCreated(new TableInfo(t.name(), t.families(), nowMicros, t.groups(), t.familyGroups(),
        TableAccess.NONE, TableOptions.NONE, t.aggregates()), c.tablets(), d.nextTabletNumber());
  }

  /** Every change of {@code changes} to {@code t}'s families, or none. */
  static Master.FamiliesSet modifyFamilies(TableInfo t, List<FamilyChange> changes) {
    Map<String, GcPolicy> families = new TreeMap<>(t.families());
    Map<String, Aggregator> aggregates = new TreeMap<>(t.aggregates());
    for (int i = 0; i < changes.size(); i++) {
      FamilyChange ch = changes.get(i);
      boolean exists = families.containsKey(ch.family());
      String where = "modifications[" + i + "]";
      switch (ch.kind()) {
        case CREATE -> {
          if (exists) {
            throw refused(ErrorCode.ALREADY_EXISTS, where + ".create: family " + ch.family() + " already exists");
          }
          families.put(ch.family(), ch.gcPolicy());
          if (ch.aggregator() != null) {
            aggregates.put(ch.family(), ch.aggregator());
          }
        }
        case UPDATE -> {
          if (!exists) {
            throw refused(ErrorCode.NOT_FOUND, where + ".update: family " + ch.family() + " not found");
          }
          if (ch.aggregator() != null && ch.aggregator() != aggregates.get(ch.family())) {
            throw refused(ErrorCode.INVALID_ARGUMENT, where + ".update.value_type: family " + ch.family()
                + " is " + (aggregates.containsKey(ch.family()) ? "an aggregate family of another type"
                : "a family of raw values") + "; a family's value type is fixed when it is created");
          }
          families.put(ch.family(), ch.gcPolicy());
        }
        case DROP -> {
          if (!exists) {
            throw refused(ErrorCode.NOT_FOUND, where + ".drop: family " + ch.family() + " not found");
          }
          if (t.options().deletionProtection()) {
            throw refused(ErrorCode.FAILED_PRECONDITION, where + ".drop: table " + t.name() + " is protected from"
                + " deletion, so are its families: turn its deletion_protection off (UpdateTable) first");
          }
          families.remove(ch.family());
          aggregates.remove(ch.family());
        }
      }
    }
    return new Master.FamiliesSet(t.name(), families, aggregates);
  }

  /**
   * Group {@code c.group()} of {@code t} with the settings {@code c} gives (the others kept),
   * holding {@code c.families()}: each is created there, keeping every version, unless it
   * already is there. A family in another group is refused: its cells are in that group's
   * files, which a read of the family would no longer look at.
   */
  static LocalityGroupsChanged setLocalityGroup(TableInfo t, SetLocalityGroup c) {
    LocalityGroup old = t.group(c.group());
    LocalityGroup g;
    try {
      g = new LocalityGroup(c.group(), old.blockSize(), c.compression() != null ? c.compression() : old.compression(),
          old.bloomBitsPerKey(), c.inMemory() != null ? c.inMemory() : old.inMemory());
    } catch (IllegalArgumentException e) {
      throw refused(ErrorCode.INVALID_ARGUMENT, "group: " + e.getMessage());
    }
    Map<String, GcPolicy> families = new TreeMap<>(t.families());
    Map<String, String> familyGroups = new TreeMap<>(t.familyGroups());
    for (int i = 0; i < c.families().size(); i++) {
      String f = c.families().get(i);
      if (families.containsKey(f) && !t.groupOf(f).equals(c.group())) {
        throw refused(ErrorCode.FAILED_PRECONDITION, "families[" + i + "]: family " + f + " is in locality group "
            + t.groupOf(f) + "; a family's group is set when the family is created");
      }
      families.putIfAbsent(f, GcPolicy.KEEP_ALL);
      if (!c.group().equals(LocalityGroup.DEFAULT_NAME)) {
        familyGroups.put(f, c.group());
      }
    }
    Map<String, LocalityGroup> groups = new TreeMap<>(t.groups());
    groups.put(g.name(), g);
    java.util.Set<String> all = new java.util.TreeSet<>(groups.keySet());
    all.add(LocalityGroup.DEFAULT_NAME);
    all.addAll(familyGroups.values());
    if (all.size() > MAX_GROUPS) {
      throw refused(ErrorCode.RESOURCE_EXHAUSTED, "group: table " + t.name() + " would have " + all.size()
          + " locality groups; a table may have at most " + MAX_GROUPS);
    }
    return new LocalityGroupsChanged(t.name(), families, groups, familyGroups);
  }

  private static Refused refused(ErrorCode code, String message) {
    return Refusal.of(code, message).exception();
  }
}
