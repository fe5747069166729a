package io.tabula.actors.master;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.serializers.RecordSerializer;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Kryo's serializer for {@link Directory} (the master's snapshot, id 1063): the bytes of
 * {@link Wire}, the record the directory once was. Stateless.
 */
public final class DirectoryBytes extends Serializer<Directory> {
  /**
   * The directory's bytes as the record it once was: its components in this order, maps as
   * {@code TreeMap}s and lists as immutable lists, so snapshots written before and after the
   * change read the same.
   */
  record Wire(long version, long nextTabletNumber, Map<String, TableInfo> tables,
      Map<String, List<TabletInfo>> tablets, Map<String, TabletPlacement> placement) {}

  private final RecordSerializer<Wire> wire = new RecordSerializer<>(Wire.class);

  public DirectoryBytes() {
    setImmutable(true);
  }

  @Override
  public void write(Kryo kryo, Output output, Directory d) {
    // TreeMaps of natural order, as the record had: new TreeMap<>(sortedMap) would take the
    // persistent map's comparator, which Kryo would then write
    TreeMap<String, List<TabletInfo>> t = new TreeMap<>();
    d.tablets().forEach((k, v) -> t.put(k, List.copyOf(v)));
    TreeMap<String, TableInfo> tables = new TreeMap<>();
    tables.putAll(d.tables());
    TreeMap<String, TabletPlacement> placement = new TreeMap<>();
    placement.putAll(d.placement());
    wire.write(kryo, output, new Wire(d.version(), d.nextTabletNumber(), tables, t, placement));
  }

  @Override
  public Directory read(Kryo kryo, Input input, Class<? extends Directory> type) {
    Wire w = wire.read(kryo, input, Wire.class);
    return new Directory(w.version(), w.nextTabletNumber(), w.tables(), w.tablets(), w.placement());
  }
}
