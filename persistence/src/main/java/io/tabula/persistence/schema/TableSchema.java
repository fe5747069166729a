package io.tabula.persistence.schema;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * A table's families and locality groups, as a tablet needs them. Immutable. Every family
 * names an existing group; the {@link LocalityGroup#DEFAULT_NAME default} group always
 * exists.
 */
public final class TableSchema {
  private final Map<String, ColumnFamily> families;
  private final Map<String, LocalityGroup> groups;
  /** How long the tablets keep their changes for change streams, in µs; 0 for no change stream. */
  private final long changeRetentionMicros;

  private TableSchema(Map<String, ColumnFamily> families, Map<String, LocalityGroup> groups,
      long changeRetentionMicros) {
    this.families = families;
    this.groups = groups;
    this.changeRetentionMicros = changeRetentionMicros;
  }

  /** This schema with tablets keeping their changes for {@code micros} (0: none kept). */
  public TableSchema withChangeRetention(long micros) {
    if (micros < 0) {
      throw new IllegalArgumentException("a change retention is at least 0, was " + micros);
    }
    return new TableSchema(families, groups, micros);
  }

  /** How long tablets keep their changes for change streams (docs/change-streams.md), in µs; 0 for none. */
  public long changeRetentionMicros() {
    return changeRetentionMicros;
  }

  public static TableSchema of(Collection<ColumnFamily> families, Collection<LocalityGroup> groups) {
    Map<String, LocalityGroup> g = new LinkedHashMap<>();
    g.put(LocalityGroup.DEFAULT_NAME, LocalityGroup.defaults(LocalityGroup.DEFAULT_NAME));
    for (LocalityGroup lg : groups) {
      g.put(lg.name(), lg);
    }
    Map<String, ColumnFamily> f = new LinkedHashMap<>();
    for (ColumnFamily cf : families) {
      if (!g.containsKey(cf.localityGroup())) {
        throw new IllegalArgumentException("column family " + cf.name() + " names unknown locality group "
            + cf.localityGroup());
      }
      if (f.put(cf.name(), cf) != null) {
        throw new IllegalArgumentException("column family " + cf.name() + " is declared twice");
      }
    }
    return new TableSchema(Map.copyOf(f), Map.copyOf(g), 0);
  }

  public static TableSchema of(ColumnFamily... families) {
    return of(List.of(families), List.of());
  }

  public ColumnFamily family(String name) {
    return families.get(name);
  }

  public Map<String, ColumnFamily> families() {
    return families;
  }

  public LocalityGroup group(String name) {
    return groups.get(name);
  }

  /** Whether group {@code name} is held in memory; false for a group not in the schema. */
  public boolean inMemory(String name) {
    LocalityGroup g = groups.get(name);
    return g != null && g.inMemory();
  }

  /** Group names in sorted order, the order a tablet keeps its SSTable sets in. */
  public SortedSet<String> groupNames() {
    return new TreeSet<>(groups.keySet());
  }

  /**
   * The family's GC policy, or null for a family not (or no longer) in the schema: the data
   * of a dropped family is never returned, and compactions drop it.
   */
  public GcPolicy gcPolicy(String family) {
    ColumnFamily cf = families.get(family);
    return cf == null ? null : cf.gcPolicy();
  }

  /** The family's aggregator, or null for a family of raw values or one not in the schema. */
  public Aggregator aggregator(String family) {
    ColumnFamily cf = families.get(family);
    return cf == null ? null : cf.aggregator();
  }

  /** The group a family's cells go to; the default group for an unknown family. */
  public String groupOf(String family) {
    ColumnFamily cf = families.get(family);
    return cf == null ? LocalityGroup.DEFAULT_NAME : cf.localityGroup();
  }
}
