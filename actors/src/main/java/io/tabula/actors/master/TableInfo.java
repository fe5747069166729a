package io.tabula.actors.master;

import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A table as the master records it: its name and its column families with their GC
 * policies (all in the default locality group: the Cloud Bigtable API has no locality
 * groups). Immutable.
 */
public record TableInfo(String name, Map<String, GcPolicy> families, long createdMicros) implements KryoSerializable {
  public TableInfo {
    families = new TreeMap<>(families);
  }

  /** The engine schema of this table. */
  public TableSchema schema() {
    List<ColumnFamily> fs = families.entrySet().stream().map(e -> ColumnFamily.of(e.getKey(), e.getValue())).toList();
    return TableSchema.of(fs, List.of(LocalityGroup.defaults(LocalityGroup.DEFAULT_NAME)));
  }

  public TableInfo withFamilies(Map<String, GcPolicy> newFamilies) {
    return new TableInfo(name, newFamilies, createdMicros);
  }
}
