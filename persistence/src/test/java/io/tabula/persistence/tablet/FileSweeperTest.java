package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's sweep on real files: the SSTables a split's children shared go once both
 * children rewrote theirs, and only after the grace; nothing referenced, young or in a table
 * with an unreadable tablet is taken; the children read the same rows afterwards. A deleted
 * table's files and folders go after the grace, and of a table re-created under its name only
 * the old tablets' folders go.
 */
class FileSweeperTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));
  private static final Duration GRACE = Duration.ofMinutes(10);

  @TempDir
  Path root;

  private TabletServer server;
  private final AtomicLong nanos = new AtomicLong();
  private final AtomicLong wallMillis = new AtomicLong(System.currentTimeMillis());

  @AfterEach
  void stop() {
    if (server != null) {
      server.abandon();
    }
  }

  private static RowMutation put(String row) {
    return RowMutation.of(row.getBytes(StandardCharsets.UTF_8), new Mutation.SetCell("f",
        "q".getBytes(StandardCharsets.UTF_8), 1000, ("v-" + row).getBytes(StandardCharsets.UTF_8)));
  }

  private static int rows(Tablet t) throws IOException {
    int n = 0;
    try (RowScanner s = t.scan(new byte[0], new byte[0], ReadFilter.all())) {
      for (Row r = s.next(); r != null; r = s.next()) {
        n++;
      }
    }
    return n;
  }

  /** Advances both clocks past the grace. */
  private void later() {
    nanos.addAndGet(GRACE.toNanos());
    wallMillis.addAndGet(GRACE.toMillis());
  }

  @Test
  void filesASplitLeftSharedGoOnceNoChildNamesThemAndOnlyAfterTheGrace() throws Exception {
    Storage storage = new FileStorage(root);
    server = TabletServer.open(storage, TabletServer.Options.defaults("n1"), () -> 5_000_000L, t -> SCHEMA,
        (what, e) -> { });
    Tablet parent = server.createTablet("tbl", "p", new byte[0], new byte[0]);
    for (int i = 0; i < 100; i++) {
      parent.apply(put(String.format("row%03d", i))).join();
    }
    parent.freezeAndFlush().join();
    String parentFile = parent.files().get("default").get(0);
    List<Tablet> children = server.split("p", "row050".getBytes(StandardCharsets.UTF_8), "l", "r");
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get, wallMillis::get);
    Map<String, Set<String>> directory = Map.of("tbl", Set.of("l", "r"));

    FileSweeper.Result shared = sweeper.sweep(directory);
    assertEquals(1, shared.unmarked(), "both children name the parent's SSTable; its manifest is unmarked: " + shared);
    later();
    wallMillis.addAndGet(60_000); // the files were written after this test's wall clock was read
    List<String> parentManifest = sweeper.sweep(directory).deleted();
    assertEquals(1, parentManifest.size(), "the parent, gone from the directory, keeps no manifest: " + parentManifest);
    assertTrue(parentManifest.get(0).startsWith(Storage.path(Tablet.dirOf("tbl", "p"), "MANIFEST-")), parentManifest
        .toString());

    children.get(0).majorCompact().join(); // the left child rewrites its half into a file of its own
    later();
    assertTrue(sweeper.sweep(directory).deleted().isEmpty(), "the right child still names the parent's file");

    children.get(1).majorCompact().join();
    FileSweeper.Result first = sweeper.sweep(directory);
    assertEquals(List.of(), first.deleted(), "unmarked only now: the grace starts");
    assertEquals(1, first.unmarked());
    nanos.addAndGet(GRACE.toNanos() - 1);
    wallMillis.addAndGet(GRACE.toMillis());
    assertEquals(List.of(), sweeper.sweep(directory).deleted(), "not before the grace has passed");
    nanos.addAndGet(1);
    assertEquals(List.of(parentFile), sweeper.sweep(directory).deleted());
    assertFalse(storage.exists(parentFile));

    assertEquals(50, rows(children.get(0)));
    assertEquals(50, rows(children.get(1)));
    server.abandon();
    server = TabletServer.open(storage, TabletServer.Options.defaults("n1"), () -> 5_000_000L, t -> SCHEMA,
        (what, e) -> { });
    assertEquals(50, rows(server.tablet("l")));
    assertEquals(50, rows(server.tablet("r")));
    later();
    FileSweeper.Result after = sweeper.sweep(directory);
    assertEquals(List.of(), after.deleted(), "the children's own files stay: " + after);
  }

  @Test
  void aYoungFileAndATableWithAnUnreadableTabletAreLeftAlone() throws Exception {
    Storage storage = new FileStorage(root);
    server = TabletServer.open(storage, TabletServer.Options.defaults("n1"), () -> 5_000_000L, t -> SCHEMA,
        (what, e) -> { });
    Tablet t = server.createTablet("tbl", "a", new byte[0], new byte[0]);
    t.apply(put("x")).join();
    t.freezeAndFlush().join();
    // A file no manifest names yet, as a flush writes before it commits: young, so it stays.
    String stray = Storage.path(Tablet.dirOf("tbl", "a"), "999999.sst");
    try (var f = storage.create(stray)) {
      f.append(new byte[] {1, 2, 3});
    }
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get, System::currentTimeMillis);
    sweeper.sweep(Map.of("tbl", Set.of("a")));
    nanos.addAndGet(GRACE.toNanos());
    FileSweeper.Result r = sweeper.sweep(Map.of("tbl", Set.of("a")));
    assertEquals(1, r.unmarked());
    assertEquals(List.of(), r.deleted(), "written within the grace: it may be a file being written");
    assertTrue(storage.exists(stray));

    // From here on no grace and an old enough file: only the rules below keep it.
    wallMillis.set(System.currentTimeMillis() + 60_000);
    // The directory has a tablet with no manifest yet: the table is skipped, nothing goes.
    FileSweeper old = new FileSweeper(storage, Duration.ZERO, nanos::get, wallMillis::get);
    FileSweeper.Result skipped = old.sweep(Map.of("tbl", Set.of("a", "new")));
    assertEquals(List.of("tbl"), skipped.tablesSkipped());
    assertTrue(storage.exists(stray));
    // With nothing in the way, the stray file goes and the tablet's own stays.
    assertEquals(List.of(stray), old.sweep(Map.of("tbl", Set.of("a"))).deleted());
    assertEquals(1, rows(t));
  }

  @Test
  void aDeletedTablesFilesGoAfterTheGraceAndARecreatedTableUnderItsNameKeepsItsOwn() throws Exception {
    Storage storage = new FileStorage(root);
    server = TabletServer.open(storage, TabletServer.Options.defaults("n1"), () -> 5_000_000L, t -> SCHEMA,
        (what, e) -> { });
    for (String id : List.of("tbl-1", "tbl-2")) {
      Tablet t = server.createTablet("tbl", id, new byte[0], new byte[0]);
      t.apply(put("x")).join();
      t.freezeAndFlush().join();
    }
    server.closeTable("tbl");
    // The table is re-created: its new tablet has a new id, so a folder of its own.
    Tablet fresh = server.createTablet("tbl", "tbl-3", new byte[0], new byte[0]);
    fresh.apply(put("y")).join();
    fresh.freezeAndFlush().join();
    server.createTablet("gone", "gone-4", new byte[0], new byte[0]).freezeAndFlush().join();
    server.closeTable("gone");

    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get, wallMillis::get);
    Map<String, Set<String>> directory = Map.of("tbl", Set.of("tbl-3"));
    FileSweeper.Result first = sweeper.sweep(directory);
    assertEquals(List.of(), first.deleted(), "nothing before the grace: " + first);
    assertTrue(first.unmarked() >= 4, "the old tablets' SSTables and manifests are unmarked: " + first);
    later();
    wallMillis.addAndGet(60_000); // the files were written after this test's wall clock was read
    FileSweeper.Result second = sweeper.sweep(directory);
    assertTrue(second.deleted().stream().allMatch(p -> p.startsWith("tables/tbl/tbl-1/")
        || p.startsWith("tables/tbl/tbl-2/") || p.startsWith("tables/gone/")), second.toString());
    assertFalse(storage.exists("tables/tbl/tbl-1"), "the old tablet's folder went with its files: "
        + storage.list("tables/tbl/tbl-1") + " " + second);
    assertFalse(storage.exists("tables/tbl/tbl-2"));
    assertFalse(storage.exists("tables/gone"), "a deleted table's folder goes once empty");
    assertEquals(List.of("tbl-3"), storage.list("tables/tbl"));
    assertEquals(1, rows(fresh), "the re-created table's tablet reads its row");
    later();
    assertEquals(List.of(), sweeper.sweep(directory).deleted(), "the new tablet's files stay");
  }
}
