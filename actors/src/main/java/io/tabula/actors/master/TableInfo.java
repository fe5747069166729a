package io.tabula.actors.master;

import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import com.esotericsoftware.kryo.DefaultSerializer;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A table as the master records it: its name, its column families with their GC policies,
 * and its locality groups (paper §6). Immutable.
 *
 * <p>A family not in {@code familyGroups} is in the {@link LocalityGroup#DEFAULT_NAME default}
 * group; a group not in {@code groups}, the default group included, has
 * {@link LocalityGroup#defaults default settings}. The Cloud Bigtable API knows no groups, so a
 * table made through it has none; Tabula's {@code LocalityGroups} service sets them.
 *
 * <p>Its Kryo bytes are {@link TableInfoBytes}' (a table written before tables had an access
 * is read with {@link TableAccess#NONE}, one written before they had options with {@link
 * TableOptions#NONE}, one written before families could be aggregate families with none).
 *
 * @param groups the groups with settings of their own, by name
 * @param familyGroups the group of each family that is not in the default group
 * @param access its IAM policy and authorized views
 * @param options what {@code UpdateTable} sets: deletion protection, change-stream retention
 * @param aggregates the aggregator of each aggregate family (docs/aggregates.md); a family not
 *     in it holds raw values. Fixed when the family is created.
 */
@DefaultSerializer(TableInfoBytes.class)
public record TableInfo(String name, Map<String, GcPolicy> families, long createdMicros,
    Map<String, LocalityGroup> groups, Map<String, String> familyGroups, TableAccess access, TableOptions options,
    Map<String, Aggregator> aggregates) implements KryoSerializable {
  public TableInfo {
    families = new TreeMap<>(families);
    groups = new TreeMap<>(groups);
    familyGroups = new TreeMap<>(familyGroups);
    aggregates = new TreeMap<>(aggregates);
    java.util.Objects.requireNonNull(access, "access");
    java.util.Objects.requireNonNull(options, "options");
    if (!families.keySet().containsAll(aggregates.keySet())) {
      throw new IllegalArgumentException("aggregates " + aggregates.keySet() + " name families table " + name
          + " does not have (" + families.keySet() + ")");
    }
  }

  /** A table with no aggregate family. */
  public TableInfo(String name, Map<String, GcPolicy> families, long createdMicros,
      Map<String, LocalityGroup> groups, Map<String, String> familyGroups, TableAccess access, TableOptions options) {
    this(name, families, createdMicros, groups, familyGroups, access, options, Map.of());
  }

  /** A table whose families are all in the default group, with default settings, and no access set. */
  public TableInfo(String name, Map<String, GcPolicy> families, long createdMicros) {
    this(name, families, createdMicros, Map.of(), Map.of(), TableAccess.NONE, TableOptions.NONE);
  }

  /** The engine schema of this table. */
  public TableSchema schema() {
    List<ColumnFamily> fs = families.entrySet().stream().map(e -> new ColumnFamily(e.getKey(), e.getValue(),
        groupOf(e.getKey()), aggregates.get(e.getKey()))).toList();
    List<LocalityGroup> gs = new java.util.ArrayList<>(groups.values());
    familyGroups.values().stream().distinct().filter(g -> !groups.containsKey(g))
        .forEach(g -> gs.add(LocalityGroup.defaults(g)));
    return TableSchema.of(fs, gs).withChangeRetention(options.changeStreamRetentionMicros());
  }

  /** The group {@code family} is stored in. */
  public String groupOf(String family) {
    return familyGroups.getOrDefault(family, LocalityGroup.DEFAULT_NAME);
  }

  /** The settings of group {@code name}: its own, or the defaults. */
  public LocalityGroup group(String name) {
    LocalityGroup g = groups.get(name);
    return g != null ? g : LocalityGroup.defaults(name);
  }

  /** This table with {@code newFamilies}; a dropped family leaves its group and its aggregator. */
  public TableInfo withFamilies(Map<String, GcPolicy> newFamilies) {
    Map<String, Aggregator> ag = new TreeMap<>(aggregates);
    ag.keySet().retainAll(newFamilies.keySet());
    return withFamilies(newFamilies, ag);
  }

  /** This table with {@code newFamilies} and their aggregators {@code newAggregates}; a dropped family leaves its group. */
  public TableInfo withFamilies(Map<String, GcPolicy> newFamilies, Map<String, Aggregator> newAggregates) {
    Map<String, String> fg = new TreeMap<>(familyGroups);
    fg.keySet().retainAll(newFamilies.keySet());
    return new TableInfo(name, newFamilies, createdMicros, groups, fg, access, options, newAggregates);
  }

  public TableInfo withGroups(Map<String, GcPolicy> newFamilies, Map<String, LocalityGroup> newGroups,
      Map<String, String> newFamilyGroups) {
    Map<String, Aggregator> ag = new TreeMap<>(aggregates);
    ag.keySet().retainAll(newFamilies.keySet());
    return new TableInfo(name, newFamilies, createdMicros, newGroups, newFamilyGroups, access, options, ag);
  }

  public TableInfo withAccess(TableAccess newAccess) {
    return new TableInfo(name, families, createdMicros, groups, familyGroups, newAccess, options, aggregates);
  }

  public TableInfo withOptions(TableOptions newOptions) {
    return new TableInfo(name, families, createdMicros, groups, familyGroups, access, newOptions, aggregates);
  }

  /**
   * {@code tables} with every {@link LegacyTableInfo} turned into a table: a snapshot written
   * before tables had locality groups holds those as the values of its map.
   */
  @SuppressWarnings("unchecked")
  static TreeMap<String, TableInfo> upgrade(Map<String, ? extends Object> tables) {
    TreeMap<String, TableInfo> out = new TreeMap<>();
    ((Map<String, Object>) tables).forEach((k, v) -> out.put(k, v instanceof LegacyTableInfo l ? l.toTableInfo()
        : (TableInfo) v));
    return out;
  }
}
