package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.zetasketch.HyperLogLogPlusPlus;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.InvalidMutationException;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Aggregate families in the engine: operands folded in reads of the memtable, in flushes,
 * in merges and major compactions, and after replay of the log, checked against a model
 * under deletes that fall between operands.
 */
class AggregateTabletTest {
  private static final TableSchema SCHEMA = TableSchema.of(List.of(
      new ColumnFamily("sum", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, Aggregator.SUM),
      new ColumnFamily("min", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, Aggregator.MIN),
      new ColumnFamily("max", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, Aggregator.MAX),
      new ColumnFamily("hll", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, Aggregator.HLL),
      new ColumnFamily("latest", GcPolicy.maxVersions(1), LocalityGroup.DEFAULT_NAME, Aggregator.SUM),
      ColumnFamily.of("raw")), List.of());

  @TempDir
  Path dir;

  private TabletServer server;

  private TabletServer open() throws IOException {
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(1 << 20,
        Durability.FSYNC), TabletOptions.defaults().withMemtableBytes(4096));
    server = TabletServer.open(new FileStorage(dir), o, () -> 5_000_000L, t -> SCHEMA, (what, e) -> { });
    return server;
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.abandon();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static long int64(byte[] v) {
    assertEquals(8, v.length, "an Int64 state is 8 bytes");
    return ByteBuffer.wrap(v).getLong();
  }

  private static RowMutation add(String row, String family, String q, long ts, long input) {
    return RowMutation.of(b(row), new Mutation.AddToCell(family, b(q), ts, input));
  }

  private static List<Cell> cells(Tablet t, String row) throws IOException {
    return t.read(b(row), ReadFilter.all()).map(Row::cells).orElse(List.of());
  }

  @Test
  void sumMinAndMaxFoldEveryOperandOfACell() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    for (long v : new long[] {5, -3, 12}) {
      t.apply(RowMutation.of(b("r"), new Mutation.AddToCell("sum", b("q"), 1000, v),
          new Mutation.AddToCell("min", b("q"), 1000, v), new Mutation.AddToCell("max", b("q"), 1000, v))).join();
    }
    t.apply(add("r", "sum", "q", 2000, 7)).join();
    List<Cell> cs = cells(t, "r");
    assertEquals(List.of("max:q@1000=12", "min:q@1000=-3", "sum:q@2000=7", "sum:q@1000=14"), show(cs));
  }

  @Test
  void mutationsAfterAnAddKeepTheirPlace() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(RowMutation.of(b("r"), new Mutation.SetCell("raw", b("q"), 1000, b("v")),
        new Mutation.AddToCell("sum", b("q"), 1000, 5), Mutation.DeleteFromRow.INSTANCE,
        new Mutation.AddToCell("sum", b("q"), 1000, 2))).join();
    assertEquals(List.of("sum:q@1000=2"), show(cells(t, "r")), "the row delete after the first add hides it");
  }

  @Test
  void aSumWrapsAroundAsTwosComplementAdditionDoes() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(add("r", "sum", "q", 1000, Long.MAX_VALUE)).join();
    t.apply(add("r", "sum", "q", 1000, 1)).join();
    assertEquals(Long.MIN_VALUE, int64(cells(t, "r").get(0).value()));
  }

  @Test
  void mergeToCellTakesAStateAndNullHasNoEffect() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(RowMutation.of(b("r"), new Mutation.MergeToCell("sum", b("q"), 1000,
        ByteBuffer.allocate(8).putLong(40).array()))).join();
    t.apply(RowMutation.of(b("r"), new Mutation.MergeToCell("sum", b("q"), 1000, null))).join();
    t.apply(add("r", "sum", "q", 1000, 2)).join();
    assertEquals(List.of("sum:q@1000=42"), show(cells(t, "r")));
  }

  @Test
  void wrongWritesAreRefusedNamingTheField() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    InvalidMutationException e = assertThrows(InvalidMutationException.class, () -> t.apply(RowMutation.of(b("r"),
        new Mutation.SetCell("raw", b("q"), 1000, b("v")), new Mutation.SetCell("sum", b("q"), 1000, b("v")))));
    assertEquals("mutations[1].set_cell.family_name", e.field());
    e = assertThrows(InvalidMutationException.class, () -> t.apply(add("r", "raw", "q", 1000, 1)));
    assertEquals("mutations[0].add_to_cell.family_name", e.field());
    e = assertThrows(InvalidMutationException.class, () -> t.apply(RowMutation.of(b("r"),
        new Mutation.MergeToCell("sum", b("q"), 1000, new byte[] {1}))));
    assertEquals("mutations[0].merge_to_cell.input", e.field());
    e = assertThrows(InvalidMutationException.class, () -> t.apply(RowMutation.of(b("r"),
        new Mutation.MergeToCell("hll", b("q"), 1000, b("not a sketch")))));
    assertEquals("mutations[0].merge_to_cell.input", e.field());
    HyperLogLogPlusPlus<String> strings = new HyperLogLogPlusPlus.Builder().buildForStrings();
    strings.add("a");
    e = assertThrows(InvalidMutationException.class, () -> t.apply(RowMutation.of(b("r"),
        new Mutation.MergeToCell("hll", b("q"), 1000, strings.serializeToByteArray()))));
    assertEquals("mutations[0].merge_to_cell.input", e.field(), "a sketch of strings does not fold into Int64s");
    e = assertThrows(InvalidMutationException.class, () -> t.apply(RowMutation.of(b("r"),
        new Mutation.MergeToCell("hll", b("q"), 1000, new byte[0]))));
    assertEquals("mutations[0].merge_to_cell.input", e.field(), "an empty state is no sketch");
    e = assertThrows(InvalidMutationException.class, () -> t.apply(add("r", "nope", "q", 1000, 1)));
    assertTrue(e.isUnknownFamily());
    assertEquals(List.of(), cells(t, "r"), "nothing of a refused row mutation is applied");
  }

  @Test
  void aUniqueCountIsWithinTheSketchsError() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(add("one", "hll", "q", 1000, 42)).join();
    assertEquals(1, HyperLogLogPlusPlus.forProto(cells(t, "one").get(0).value()).result(),
        "one add, read from the memtable, is a sketch of one value");
    t.apply(add("one", "hll", "q", 1000, 42)).join();
    t.apply(add("one", "hll", "q", 1000, 7)).join();
    assertEquals(2, HyperLogLogPlusPlus.forProto(cells(t, "one").get(0).value()).result());
    int distinct = 20_000;
    for (int i = 0; i < distinct; i += 100) {
      List<Mutation> ms = new ArrayList<>();
      for (int j = i; j < i + 100; j++) {
        ms.add(new Mutation.AddToCell("hll", b("q"), 1000, j % 2 == 0 ? j : j));
        ms.add(new Mutation.AddToCell("hll", b("q"), 1000, j)); // every value twice
      }
      t.apply(new RowMutation(b("r"), ms)).join();
    }
    t.majorCompact().join();
    long count = HyperLogLogPlusPlus.forProto(cells(t, "r").get(0).value()).result();
    // precision 15: a standard error of 1.04 / sqrt(2^15), about 0.57%; allow four of them
    assertTrue(Math.abs(count - distinct) < distinct * 4 * 0.0057, "counted " + count + " of " + distinct);
  }

  /**
   * A family dropped and made again as the other kind keeps, until compactions remove them,
   * the entries written before: they are never read, and a compaction drops them.
   */
  @Test
  void aFamilyMadeAgainAsTheOtherKindNeverReadsTheEntriesOfTheFirst() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(RowMutation.of(b("r"), new Mutation.SetCell("raw", b("q"), 1000, b("old")))).join();
    t.apply(add("r", "hll", "q", 1000, 5)).join();
    t.updateSchema(TableSchema.of(List.of(
        new ColumnFamily("raw", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, Aggregator.HLL),
        new ColumnFamily("hll", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, null)), List.of()));
    assertEquals(List.of(), cells(t, "r"), "nothing of the other kind is read");
    t.apply(add("r", "raw", "q", 1000, 7)).join();
    t.apply(RowMutation.of(b("r"), new Mutation.SetCell("hll", b("q"), 1000, b("new")))).join();
    for (int pass = 0; pass < 2; pass++) {
      List<Cell> cs = cells(t, "r");
      assertEquals(2, cs.size(), cs.toString());
      assertEquals("new", new String(cs.get(0).value(), StandardCharsets.UTF_8));
      assertEquals(1, HyperLogLogPlusPlus.forProto(cs.get(1).value()).result(), "the old raw value is not folded in");
      t.majorCompact().join();
    }
  }

  @Test
  void aMaxVersionsPolicyCountsAFoldedCellAsOneVersion() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(add("r", "latest", "q", 1000, 1)).join();
    t.apply(add("r", "latest", "q", 2000, 2)).join();
    t.apply(add("r", "latest", "q", 2000, 3)).join();
    assertEquals(List.of("latest:q@2000=5"), show(cells(t, "r")));
    t.majorCompact().join();
    assertEquals(List.of("latest:q@2000=5"), show(cells(t, "r")));
  }

  /**
   * Random adds, merges and deletes (of the column, of a time range, of the family, of the
   * row) across flushes of a 4 KiB memtable, merges, major compactions and a reopen from the
   * log, checked after each step against a model that applies them in order.
   */
  @Test
  void foldsAgreeWithAModelAcrossFlushesCompactionsAndReplay() throws IOException {
    for (long seed = 1; seed <= 4; seed++) {
      runModel(seed);
      stop();
      server = null;
      for (java.io.File f : dir.toFile().listFiles()) {
        deleteTree(f.toPath());
      }
    }
  }

  private static void deleteTree(Path p) throws IOException {
    if (java.nio.file.Files.isDirectory(p)) {
      try (var s = java.nio.file.Files.list(p)) {
        for (Path c : s.toList()) {
          deleteTree(c);
        }
      }
    }
    java.nio.file.Files.delete(p);
  }

  private void runModel(long seed) throws IOException {
    Random rnd = new Random(seed);
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    // model: row -> "family:q@ts" -> value
    Map<String, TreeMap<String, Long>> model = new TreeMap<>();
    String[] rows = {"a", "b", "c"};
    String[] families = {"sum", "min", "max"};
    for (int step = 0; step < 3000; step++) {
      String row = rows[rnd.nextInt(rows.length)];
      String family = families[rnd.nextInt(families.length)];
      String q = "q" + rnd.nextInt(2);
      long ts = 1000L * (1 + rnd.nextInt(3));
      int what = rnd.nextInt(100);
      TreeMap<String, Long> cells = model.computeIfAbsent(row, r -> new TreeMap<>());
      String key = family + ":" + q + "@" + ts;
      if (what < 80) {
        long v = rnd.nextInt(2001) - 1000;
        Mutation m = rnd.nextBoolean() ? new Mutation.AddToCell(family, b(q), ts, v)
            : new Mutation.MergeToCell(family, b(q), ts, ByteBuffer.allocate(8).putLong(v).array());
        t.apply(RowMutation.of(b(row), m)).join();
        Aggregator a = SCHEMA.aggregator(family);
        Long old = cells.get(key);
        cells.put(key, old == null ? v : ByteBuffer.wrap(a.merge(ByteBuffer.allocate(8).putLong(old).array(),
            ByteBuffer.allocate(8).putLong(v).array())).getLong());
      } else if (what < 88) {
        long start = 1000L * rnd.nextInt(4);
        long end = start + 1000L * (1 + rnd.nextInt(2));
        t.apply(RowMutation.of(b(row), new Mutation.DeleteFromColumn(family, b(q), start, end))).join();
        String prefix = family + ":" + q + "@";
        cells.keySet().removeIf(k -> {
          if (!k.startsWith(prefix)) {
            return false;
          }
          long kts = Long.parseLong(k.substring(prefix.length()));
          return kts >= start && kts < end;
        });
      } else if (what < 93) {
        t.apply(RowMutation.of(b(row), new Mutation.DeleteFromFamily(family))).join();
        cells.keySet().removeIf(k -> k.startsWith(family + ":"));
      } else if (what < 95) {
        t.apply(RowMutation.of(b(row), Mutation.DeleteFromRow.INSTANCE)).join();
        cells.clear();
      } else if (what < 97) {
        t.majorCompact().join();
      } else if (what < 98) {
        server.abandon(); // no flush: the tail comes back from the log
        t = open().tablet("t1");
      } else {
        t.freezeAndFlush().join();
      }
      if (step % 50 == 0 || step == 2999) {
        for (String r : rows) {
          assertEquals(expected(model.get(r)), actual(t, r), "seed " + seed + ", step " + step + ", row " + r);
        }
      }
    }
  }

  private static Map<String, Long> expected(TreeMap<String, Long> cells) {
    return cells == null ? Map.of() : new TreeMap<>(cells);
  }

  private static Map<String, Long> actual(Tablet t, String row) throws IOException {
    Map<String, Long> out = new TreeMap<>();
    Optional<Row> r = t.read(b(row), ReadFilter.all());
    if (r.isPresent()) {
      for (Cell c : r.get().cells()) {
        out.put(c.family() + ":" + new String(c.qualifier(), StandardCharsets.UTF_8) + "@" + c.timestamp(),
            int64(c.value()));
      }
    }
    return out;
  }

  private static List<String> show(List<Cell> cs) {
    List<String> out = new ArrayList<>();
    for (Cell c : cs) {
      out.add(c.family() + ":" + new String(c.qualifier(), StandardCharsets.UTF_8) + "@" + c.timestamp() + "="
          + int64(c.value()));
    }
    return out;
  }
}
