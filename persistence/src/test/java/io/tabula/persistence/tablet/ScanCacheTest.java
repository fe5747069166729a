package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.cache.ScanCache;
import io.tabula.persistence.model.Cell;
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
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point reads through the scan cache: a row read again comes from the cache, reads still see
 * newer writes in the memtable and deletes, a compaction's new file is read afresh, and a row
 * too wide to hold is read from its file every time. (The randomized {@code ModelTest} runs
 * with a small scan cache too.)
 */
class ScanCacheTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));

  @TempDir
  Path dir;

  private TabletServer server;
  private Tablet tablet;

  @BeforeEach
  void open() throws IOException {
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1,
        new CommitLogOptions(1 << 20, Durability.FSYNC), TabletOptions.defaults()).withScanCache(1 << 20);
    server = TabletServer.open(new FileStorage(dir), o, () -> 5_000_000L, t -> SCHEMA);
    tablet = server.createTablet("tbl", "t1", new byte[0], new byte[0]);
  }

  @AfterEach
  void close() {
    server.abandon();
  }

  @Test
  void aRowReadAgainComesFromTheCacheAndStillSeesNewerWrites() throws Exception {
    write("a", "q", "v1");
    write("b", "q", "b1");
    tablet.freezeAndFlush().join();
    assertEquals("v1", value("a"));
    assertEquals(new ScanCache.Stats(0, 1, stats().weightedBytes(), 1), stats());
    assertEquals("v1", value("a"));
    assertEquals(1, stats().hits());

    write("a", "q", "v2"); // newer, in the memtable: merged over the cached file entries
    assertEquals("v2", value("a"));
    assertEquals(2, stats().hits());

    tablet.apply(RowMutation.of(b("b"), Mutation.DeleteFromRow.INSTANCE)).join();
    assertEquals(Optional.empty(), tablet.read(b("b"), ReadFilter.all()));

    tablet.freezeAndFlush().join();
    tablet.majorCompact().join();
    long missesBefore = stats().misses();
    assertEquals("v2", value("a"));
    assertEquals(missesBefore + 1, stats().misses(), "the compacted file is a new file: read from it once");
    assertEquals("v2", value("a"));
    assertEquals(Optional.empty(), tablet.read(b("b"), ReadFilter.all()));
    assertEquals(1, stats().rows(), "the replaced files' rows were dropped with their readers");
  }

  @Test
  void aRowTooWideToHoldIsReadFromItsFileEveryTime() throws Exception {
    String big = "x".repeat(1000);
    for (int i = 0; i < 100; i++) {
      write("wide", String.format("q%03d", i), big + i);
    }
    write("narrow", "q", "n");
    tablet.freezeAndFlush().join();
    for (int k = 0; k < 3; k++) {
      Row r = tablet.read(b("wide"), ReadFilter.all()).orElseThrow();
      assertEquals(100, r.cells().size());
      List<Cell> cells = r.cells();
      assertEquals(big + 99, new String(cells.get(99).value(), StandardCharsets.UTF_8));
    }
    assertEquals(0, stats().hits());
    assertEquals(3, stats().misses());
    assertTrue(stats().weightedBytes() < ScanCache.MAX_ROW_BYTES, "the wide row's cells are not held");
    assertEquals("n", value("narrow"));
    assertEquals("n", value("narrow"));
    assertEquals(1, stats().hits());
  }

  private ScanCache.Stats stats() {
    return server.env().scanCache().stats();
  }

  private void write(String row, String qualifier, String value) {
    tablet.apply(RowMutation.of(b(row), new Mutation.SetCell("f", b(qualifier), 1000, b(value)))).join();
  }

  private String value(String row) throws IOException {
    Row r = tablet.read(b(row), ReadFilter.all()).orElseThrow();
    return new String(r.cells().get(0).value(), StandardCharsets.UTF_8);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
