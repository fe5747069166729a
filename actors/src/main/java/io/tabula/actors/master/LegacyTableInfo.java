package io.tabula.actors.master;

import io.tabula.persistence.schema.GcPolicy;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.Map;

/**
 * A table as events and snapshots recorded it before tables had locality groups (Kryo id
 * 1061; see docs/formats/master-journal.md). Read only, and turned into a {@link TableInfo}
 * whose families are all in the default group.
 */
public record LegacyTableInfo(String name, Map<String, GcPolicy> families, long createdMicros)
    implements KryoSerializable {
  public LegacyTableInfo {
    families = new java.util.TreeMap<>(families);
  }

  public TableInfo toTableInfo() {
    return new TableInfo(name, families, createdMicros);
  }
}
