package io.tabula.actors.master;

import io.tabula.protocol.kryo.KryoSerializable;
import java.util.List;
import java.util.Map;

/**
 * The master's snapshot as it was stored before tablets had owners (Kryo id 1060; see
 * docs/formats/master-journal.md). Read only, and turned into a {@link Directory} whose
 * tablets are all unassigned: the master places them once it runs.
 */
public record LegacyDirectory(long version, long nextTabletNumber, Map<String, LegacyTableInfo> tables,
    Map<String, List<TabletInfo>> tablets) implements KryoSerializable {
  public Directory toDirectory() {
    return new Directory(version, nextTabletNumber, TableInfo.upgrade(tables), tablets, Map.of());
  }
}
