package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.sstable.Compression;
import io.tabula.protocol.kryo.KryoSerializer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The master's journal format (docs/formats/master-journal.md): each event and the snapshot
 * state, serialized, must equal the bytes in {@code golden/master-journal.txt}, so a change
 * that would make old journals unreadable fails here. Regenerate deliberately with
 * {@code -Dtabula.golden.write=<dir>} (and say why in the commit).
 */
class JournalGoldenTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("journal-golden");
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Map<String, Object> samples() {
    Map<String, GcPolicy> families = new LinkedHashMap<>();
    families.put("cf", GcPolicy.maxVersions(3));
    families.put("logs", GcPolicy.union(GcPolicy.maxAgeMicros(86_400_000_000L), GcPolicy.maxVersions(1)));
    families.put("raw", GcPolicy.KEEP_ALL);
    TableInfo table = new TableInfo("users", families, 1_700_000_000_000_000L);
    LegacyTableInfo legacyTable = new LegacyTableInfo("users", families, 1_700_000_000_000_000L);
    TabletInfo t1 = TabletInfo.empty("users", "users-1", new byte[0], b("m"));
    TabletInfo t2 = new TabletInfo("users", "users-2", b("m"), new byte[0],
        Map.of("default", List.of("tables/users/users-2/000001.sst")), 42);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("LegacyTableCreated", new Master.LegacyTableCreated(legacyTable, List.of(t1, t2), 3));
    out.put("TableCreated", new Master.TableCreated(grouped(table), List.of(t1, t2), 3));
    out.put("LocalityGroupsChanged", new Master.LocalityGroupsChanged("users", families,
        Map.of("mem", new LocalityGroup("mem", 4096, Compression.LZ4, 10, true)), Map.of("raw", "mem")));
    out.put("TableDeleted", new Master.TableDeleted("users"));
    out.put("FamiliesChanged", new Master.FamiliesChanged("users", Map.of("cf",
        GcPolicy.intersection(GcPolicy.maxVersions(2), GcPolicy.maxAgeMicros(1_000_000)))));
    out.put("TabletSplit", new Master.TabletSplit("users", "users-2", b("t"), "users-a", "users-b"));
    out.put("TabletFilesRecorded", new Master.TabletFilesRecorded("users", "users-1",
        Map.of("default", List.of("tables/users/users-1/000002.sst", "tables/users/users-1/000001.sst")), 7));
    Directory legacy = Directory.EMPTY.withTable(table, List.of(t1, t2), 3);
    out.put("LegacyDirectory", new LegacyDirectory(legacy.version(), legacy.nextTabletNumber(),
        new java.util.TreeMap<>(Map.of("users", legacyTable)), new java.util.TreeMap<>(Map.of("users", List.of(t1, t2)))));
    out.put("TabletsAssigned", new Master.TabletsAssigned(Map.of("users-1", "n1", "users-2", "n2")));
    out.put("MoveStarted", new Master.MoveStarted("users-1", "n1", "n3"));
    out.put("MoveHandedOver", new Master.MoveHandedOver("users-1", "n3"));
    out.put("MoveFinished", new Master.MoveFinished("users-1"));
    out.put("TabletOpened", new Master.TabletOpened("users-1", "n3", "n3.19a2b3c4d5e-7f01", List.of("n1.19a2b3c4000-0a0b")));
    out.put("TabletsOpened", new Master.TabletsOpened(List.of(new Master.TabletOpened("users-1", "n3",
        "n3.19a2b3c4d5e-7f01", List.of()), new Master.TabletOpened("users-2", "n2", "n2.19a2b3c4d5f-0c0d", List.of()))));
    out.put("TabletClosed", new Master.TabletClosed("users-1", "n3.19a2b3c4d5e-7f01"));
    out.put("MergeStarted", new Master.MergeStarted("users", "users-1", "users-2", "users-7a3f09c2b1d4"));
    out.put("TabletsMerged", new Master.TabletsMerged("users", "users-1", "users-2", "users-7a3f09c2b1d4"));
    out.put("MergeAbandoned", new Master.MergeAbandoned("users-1", "users-2"));
    out.put("AccessChanged", new Master.AccessChanged("users", access()));
    out.put("OptionsChanged", new Master.OptionsChanged("users", new TableOptions(true, 3 * 86_400_000_000L)));
    Map<String, GcPolicy> counters = new LinkedHashMap<>(families);
    counters.put("visits", GcPolicy.maxVersions(30));
    counters.put("visitors", GcPolicy.KEEP_ALL);
    Map<String, Aggregator> aggregates = Map.of("visits", Aggregator.SUM, "visitors", Aggregator.HLL);
    out.put("TableCreatedWithAggregates", new Master.TableCreated(table.withFamilies(counters, aggregates),
        List.of(t1, t2), 3));
    out.put("FamiliesSet", new Master.FamiliesSet("users", counters, aggregates));
    out.put("Directory", legacy.withPlacements(Map.of("users-1", new TabletPlacement("n3",
        TabletPlacement.State.MOVING, "n1", List.of("n1.19a2b3c4000-0a0b")), "users-2", TabletPlacement.UNASSIGNED
        .servedBy("n2"))));
    return out;
  }

  /** A policy with two roles, and a view of rows "eu#" with one family's "name" column and "tag:" columns. */
  private static TableAccess access() {
    ViewInfo view = new ViewInfo("europe", List.of("eu#"), Map.of("cf", new ViewInfo.FamilySubset(List.of("name"),
        List.of("tag:"))), true, 3, Map.of("roles/bigtable.reader", List.of("user:bo@example.com")), 2);
    return new TableAccess(Map.of("roles/bigtable.user", List.of("user:ana@example.com",
        "serviceAccount:loader@p.iam.gserviceaccount.com"), "roles/bigtable.viewer", List.of("allAuthenticatedUsers")),
        5, Map.of("europe", view));
  }

  /**
   * Journals written before tables had an access (the events and snapshots of {@code
   * golden/master-journal-before-access.txt}) read back as the same tables with none, and write
   * today's bytes.
   */
  @Test
  void journalsFromBeforeAccessReadBack() throws IOException {
    Serialization s = SerializationExtension.get(Adapter.toClassic(kit.system()));
    Map<String, String> old = golden("/golden/master-journal-before-access.txt");
    Map<String, Object> now = samples();
    HexFormat hex = HexFormat.of();
    for (String key : List.of("TableCreated", "Directory", "LegacyTableCreated", "LegacyDirectory")) {
      Object back = s.deserialize(hex.parseHex(old.get(key)), KryoSerializer.IDENTIFIER, "").get();
      assertEquals(hex.formatHex(s.serialize(now.get(key)).get()), hex.formatHex(s.serialize(back).get()), key);
    }
    Master.TableCreated created = (Master.TableCreated) s.deserialize(hex.parseHex(old.get("TableCreated")),
        KryoSerializer.IDENTIFIER, "").get();
    assertEquals(TableAccess.NONE, created.table().access());
    assertEquals(Map.of("raw", "mem"), created.table().familyGroups());
  }

  /**
   * Journals written before tables had options (the events and snapshots of {@code
   * golden/master-journal-before-options.txt}, tables in form 2) read back as the same tables
   * with none, and write today's bytes.
   */
  @Test
  void journalsFromBeforeOptionsReadBack() throws IOException {
    Serialization s = SerializationExtension.get(Adapter.toClassic(kit.system()));
    Map<String, String> old = golden("/golden/master-journal-before-options.txt");
    Map<String, Object> now = samples();
    HexFormat hex = HexFormat.of();
    for (String key : List.of("TableCreated", "Directory", "LegacyTableCreated", "LegacyDirectory", "AccessChanged")) {
      Object back = s.deserialize(hex.parseHex(old.get(key)), KryoSerializer.IDENTIFIER, "").get();
      assertEquals(hex.formatHex(s.serialize(now.get(key)).get()), hex.formatHex(s.serialize(back).get()), key);
    }
    Master.TableCreated created = (Master.TableCreated) s.deserialize(hex.parseHex(old.get("TableCreated")),
        KryoSerializer.IDENTIFIER, "").get();
    assertEquals(TableOptions.NONE, created.table().options());
    assertEquals(Map.of("raw", "mem"), created.table().familyGroups());
    Directory d = (Directory) s.deserialize(hex.parseHex(old.get("Directory")), KryoSerializer.IDENTIFIER, "").get();
    assertEquals(TableOptions.NONE, d.table("users").options());
  }

  /**
   * Journals written before families could be aggregate families (the events and snapshots of
   * {@code golden/master-journal-before-aggregates.txt}, tables in form 3) read back as the
   * same tables with none, and write today's bytes.
   */
  @Test
  void journalsFromBeforeAggregatesReadBack() throws IOException {
    Serialization s = SerializationExtension.get(Adapter.toClassic(kit.system()));
    Map<String, String> old = golden("/golden/master-journal-before-aggregates.txt");
    Map<String, Object> now = samples();
    HexFormat hex = HexFormat.of();
    for (String key : List.of("TableCreated", "Directory", "LegacyTableCreated", "LegacyDirectory", "AccessChanged",
        "OptionsChanged", "FamiliesChanged")) {
      Object back = s.deserialize(hex.parseHex(old.get(key)), KryoSerializer.IDENTIFIER, "").get();
      assertEquals(hex.formatHex(s.serialize(now.get(key)).get()), hex.formatHex(s.serialize(back).get()), key);
    }
    Master.TableCreated created = (Master.TableCreated) s.deserialize(hex.parseHex(old.get("TableCreated")),
        KryoSerializer.IDENTIFIER, "").get();
    assertEquals(Map.of(), created.table().aggregates());
    Master.TableCreated typed = (Master.TableCreated) now.get("TableCreatedWithAggregates");
    assertEquals(Aggregator.HLL, typed.table().schema().aggregator("visitors"));
    assertEquals(null, typed.table().schema().aggregator("cf"));
  }

  /** The sample table with a locality group of its own, holding one family. */
  private static TableInfo grouped(TableInfo t) {
    return t.withGroups(t.families(), Map.of("mem", new LocalityGroup("mem", 4096, Compression.LZ4, 10, true)),
        Map.of("raw", "mem"));
  }

  private static Map<String, String> golden(String resource) throws IOException {
    Map<String, String> out = new LinkedHashMap<>();
    try (var in = JournalGoldenTest.class.getResourceAsStream(resource)) {
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        String[] kv = line.split(" ");
        out.put(kv[0], kv[1]);
      }
    }
    return out;
  }

  /**
   * Journals written before tables had locality groups (the events and snapshots of
   * {@code golden/master-journal-before-groups.txt}) read back as the same tables, with every
   * family in the default group.
   */
  @Test
  void journalsFromBeforeLocalityGroupsReadBack() throws IOException {
    Serialization s = SerializationExtension.get(Adapter.toClassic(kit.system()));
    Map<String, String> old = golden("/golden/master-journal-before-groups.txt");
    Map<String, Object> now = samples();
    HexFormat hex = HexFormat.of();
    Object created = s.deserialize(hex.parseHex(old.get("TableCreated")), KryoSerializer.IDENTIFIER, "").get();
    Master.TableCreated upgraded = ((Master.LegacyTableCreated) created).upgrade();
    assertEquals(Map.of(), upgraded.table().familyGroups());
    assertEquals(LocalityGroup.DEFAULT_NAME, upgraded.table().schema().groupOf("raw"));
    Master.TableCreated expected = (Master.TableCreated) now.get("TableCreated");
    assertEquals(hex.formatHex(s.serialize(new Master.TableCreated(new TableInfo("users", expected.table().families(),
        expected.table().createdMicros()), expected.tablets(), 3)).get()), hex.formatHex(s.serialize(upgraded).get()));
    for (String snapshot : List.of("Directory", "LegacyDirectory")) {
      Object back = s.deserialize(hex.parseHex(old.get(snapshot)), KryoSerializer.IDENTIFIER, "").get();
      Directory d = back instanceof LegacyDirectory l ? l.toDirectory() : (Directory) back;
      TableInfo t = d.table("users");
      assertEquals(new TableInfo("users", t.families(), 1_700_000_000_000_000L), t, snapshot);
      assertEquals(3, t.families().size(), snapshot);
    }
    Object dir = s.deserialize(hex.parseHex(old.get("Directory")), KryoSerializer.IDENTIFIER, "").get();
    assertEquals(hex.formatHex(s.serialize(now.get("Directory")).get()), hex.formatHex(s.serialize(dir).get()),
        "the old snapshot reads back as the sample directory");
  }

  @Test
  void eventsAndSnapshotsKeepTheirBytes() throws IOException {
    Serialization s = SerializationExtension.get(Adapter.toClassic(kit.system()));
    List<String> lines = new ArrayList<>();
    for (Map.Entry<String, Object> e : samples().entrySet()) {
      assertEquals(KryoSerializer.IDENTIFIER, s.findSerializerFor(e.getValue()).identifier(), e.getKey()
          + " must be stored with the Kryo serializer");
      byte[] bytes = s.serialize(e.getValue()).get();
      Object back = s.deserialize(bytes, e.getValue().getClass()).get();
      assertEquals(HexFormat.of().formatHex(bytes), HexFormat.of().formatHex(s.serialize(back).get()),
          e.getKey() + " reads back to the same value");
      lines.add(e.getKey() + " " + HexFormat.of().formatHex(bytes));
    }
    String actual = String.join("\n", lines) + "\n";
    String write = System.getProperty("tabula.golden.write");
    if (write != null) {
      Files.writeString(Path.of(write).resolve("master-journal.txt"), actual);
    }
    try (var in = JournalGoldenTest.class.getResourceAsStream("/golden/master-journal.txt")) {
      String golden = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
      assertEquals(golden, actual, "the master's journal bytes changed: old journals would not read back");
    }
  }
}
