package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Merging two adjacent tablets (paper §5): the merged tablet references both parents'
 * SSTables, holds every row of both, replays nothing, takes new writes after every inherited
 * cell, and survives a restart of a node that opens tablets on demand.
 */
class MergeTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"), new ColumnFamily("sum",
      io.tabula.persistence.schema.GcPolicy.KEEP_ALL, io.tabula.persistence.schema.LocalityGroup.DEFAULT_NAME,
      io.tabula.persistence.schema.Aggregator.SUM));

  @TempDir
  Path dir;

  private final AtomicLong now = new AtomicLong(5_000_000);
  private TabletServer server;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static RowMutation set(String row, String value) {
    return RowMutation.of(b(row), new Mutation.SetCell("f", b("q"), Mutation.SERVER_TIME, b(value)));
  }

  private TabletServer start(String log) throws IOException {
    server = TabletServer.startOnDemand(new FileStorage(dir), new TabletServer.Options(log, 1 << 20, 1,
        new CommitLogOptions(1 << 20, Durability.FSYNC), TabletOptions.defaults()), now::get, t -> SCHEMA,
        BackgroundFailures.systemLogger());
    return server;
  }

  @AfterEach
  void stop() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  private static List<String> rows(Tablet t) throws IOException {
    List<String> out = new ArrayList<>();
    try (RowScanner s = t.scan(new byte[0], new byte[0], ReadFilter.all())) {
      for (Row r = s.next(); r != null; r = s.next()) {
        out.add(new String(r.key(), StandardCharsets.UTF_8) + "=" + new String(r.cells().get(0).value(),
            StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  @Test
  void aMergedTabletHoldsBothParentsRowsAndTakesNewWrites() throws IOException {
    start("n1.a");
    Tablet left = server.openTablet("t", "t-1", new byte[0], b("m"), List.of()).tablet();
    Tablet right = server.openTablet("t", "t-2", b("m"), new byte[0], List.of()).tablet();
    left.apply(set("a", "1")).join();
    left.apply(set("c", "old")).join();
    right.apply(set("x", "2")).join();
    left.freezeAndFlush().join();
    left.apply(set("c", "3")).join();

    assertThrows(IllegalStateException.class, () -> server.writeMergedManifest("t", "t-1", "t-2", "t-9"),
        "open tablets are not merged");
    server.closeTablet("t-1");
    server.closeTablet("t-2");
    TabletManifest m = server.writeMergedManifest("t", "t-1", "t-2", "t-9");
    assertArrayEquals(new byte[0], m.startRow());
    assertArrayEquals(new byte[0], m.endRow());
    assertTrue(m.groups().values().stream().flatMap(List::stream).noneMatch(TabletManifest.FileRef::owned),
        "the parents' files are shared, not owned");

    TabletServer.Opened opened = server.openTablet("t", "t-9", new byte[0], new byte[0], List.of("n1.a"));
    assertEquals(0, opened.replayedRecords(), "a merged tablet has nothing to replay");
    Tablet child = opened.tablet();
    assertEquals(List.of("a=1", "c=3", "x=2"), rows(child));
    child.apply(set("c", "4")).join();
    child.apply(set("n", "5")).join();
    assertEquals(List.of("a=1", "c=4", "n=5", "x=2"), rows(child), "new writes come after inherited cells");
    server.close();

    start("n1.b");
    Tablet again = server.openTablet("t", "t-9", new byte[0], new byte[0], List.of("n1.a")).tablet();
    assertEquals(List.of("a=1", "c=4", "n=5", "x=2"), rows(again), "the merged tablet survives a restart");
  }

  /**
   * Split siblings share their parent's files; when one has compacted them away (dropping a
   * deleted cell, folding an aggregate cell) and the other still names them, a merge must not
   * bring the shared file's rows of the first back: the deleted cell would return and the
   * folded operands count twice. Nor may a file both name be read twice.
   */
  @Test
  void mergingSplitSiblingsReadsEachRowOnce() throws IOException {
    start("n1.a");
    Tablet t = server.openTablet("t", "t-1", new byte[0], new byte[0], List.of()).tablet();
    for (int i = 0; i < 3; i++) {
      t.apply(RowMutation.of(b("a"), new Mutation.AddToCell("sum", b("q"), 1000, 1))).join();
      t.apply(RowMutation.of(b("x"), new Mutation.AddToCell("sum", b("q"), 1000, 10))).join();
    }
    t.apply(set("c", "deleted later")).join();
    t.freezeAndFlush().join();
    server.split("t-1", b("m"), "t-2", "t-3"); // a node that opens tablets on demand: the children are closed
    Tablet left = server.openTablet("t", "t-2", new byte[0], b("m"), List.of()).tablet();
    left.apply(RowMutation.of(b("c"), Mutation.DeleteFromRow.INSTANCE)).join();
    left.freezeAndFlush().join();
    left.majorCompact().join(); // left owns its rows now, c and its delete gone; right still names the parent's file
    server.closeTablet("t-2");
    server.closeTablet("t-3");
    server.writeMergedManifest("t", "t-2", "t-3", "t-9");
    Tablet child = server.openTablet("t", "t-9", new byte[0], new byte[0], List.of()).tablet();
    List<String> cells = new ArrayList<>();
    try (RowScanner s = child.scan(new byte[0], new byte[0], ReadFilter.all())) {
      for (Row r = s.next(); r != null; r = s.next()) {
        for (io.tabula.persistence.model.Cell c : r.cells()) {
          cells.add(new String(r.key(), StandardCharsets.UTF_8) + " " + c.family() + "=" + (c.family().equals("sum")
              ? java.nio.ByteBuffer.wrap(c.value()).getLong() : new String(c.value(), StandardCharsets.UTF_8)));
        }
      }
    }
    assertEquals(List.of("a sum=3", "x sum=30"), cells);
  }

  @Test
  void onlyAdjacentActiveTabletsMerge() throws IOException {
    start("n1.a");
    server.openTablet("t", "t-1", new byte[0], b("g"), List.of());
    server.openTablet("t", "t-3", b("p"), new byte[0], List.of());
    server.closeTablet("t-1");
    server.closeTablet("t-3");
    assertThrows(IllegalStateException.class, () -> server.writeMergedManifest("t", "t-1", "t-3", "t-9"));
  }
}
