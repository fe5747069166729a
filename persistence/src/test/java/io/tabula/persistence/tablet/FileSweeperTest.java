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
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's sweep on real files: the SSTables a split's children shared go once both
 * children rewrote theirs, and only after the grace; nothing referenced, young or in a table
 * with an unreadable tablet is taken; the children read the same rows afterwards. A deleted
 * table's files and folders go after the grace, and of a table re-created under its name only
 * the old tablets' folders go. Nothing goes on stale marks (H4): a file named, or a tablet
 * recorded, between marking and deleting stays; a sweep whose master's check fails, or that
 * ran too long, deletes nothing; a new master's grace starts afresh. Ages are by the storage's
 * clock (the tests move it by making the files on disk older), however far it is from ours.
 */
class FileSweeperTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));
  private static final Duration GRACE = Duration.ofMinutes(10);

  @TempDir
  Path root;

  private TabletServer server;
  /** This process's monotonic clock, as the sweeper reads it. */
  private final AtomicLong nanos = new AtomicLong();
  /** The marks of the one master these tests sweep for, unless a test says otherwise. */
  private final FileSweeper.Marks marks = new FileSweeper.Marks();
  /** What the master's check answers. */
  private final AtomicBoolean master = new AtomicBoolean(true);

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

  private FileSweeper.Result sweep(FileSweeper sweeper, Map<String, Set<String>> directory) throws IOException {
    return sweeper.sweep(marks, () -> directory, master::get);
  }

  /** Advances this process's monotonic clock and the storage's past the grace. */
  private void later() throws IOException {
    nanos.addAndGet(GRACE.toNanos());
    age(GRACE);
  }

  /** Makes every file on disk last written {@code d} earlier: as if the storage's clock had moved on by {@code d}. */
  private void age(Duration d) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      for (Path p : files.filter(Files::isRegularFile).toList()) {
        try {
          Files.setLastModifiedTime(p, FileTime.fromMillis(Files.getLastModifiedTime(p).toMillis() - d.toMillis()));
        } catch (java.nio.file.NoSuchFileException gone) {
          // a commit-log segment the log's preparer renamed meanwhile (it is no table file)
        }
      }
    }
  }

  @Test
  void filesASplitLeftSharedGoOnceNoChildNamesThemAndOnlyAfterTheGrace() throws Exception {
    Storage storage = new FileStorage(root);
    open(storage);
    Tablet parent = server.createTablet("tbl", "p", new byte[0], new byte[0]);
    for (int i = 0; i < 100; i++) {
      parent.apply(put(String.format("row%03d", i))).join();
    }
    parent.freezeAndFlush().join();
    String parentFile = parent.files().get("default").get(0);
    List<Tablet> children = server.split("p", "row050".getBytes(StandardCharsets.UTF_8), "l", "r");
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    Map<String, Set<String>> directory = Map.of("tbl", Set.of("l", "r"));

    FileSweeper.Result shared = sweep(sweeper, directory);
    assertEquals(1, shared.unmarked(), "both children name the parent's SSTable; its manifest is unmarked: " + shared);
    later();
    List<String> parentManifest = sweep(sweeper, directory).deleted();
    assertEquals(1, parentManifest.size(), "the parent, gone from the directory, keeps no manifest: " + parentManifest);
    assertTrue(parentManifest.get(0).startsWith(Storage.path(Tablet.dirOf("tbl", "p"), "MANIFEST-")), parentManifest
        .toString());

    children.get(0).majorCompact().join(); // the left child rewrites its half into a file of its own
    later();
    assertTrue(sweep(sweeper, directory).deleted().isEmpty(), "the right child still names the parent's file");

    children.get(1).majorCompact().join();
    FileSweeper.Result first = sweep(sweeper, directory);
    assertEquals(List.of(), first.deleted(), "unmarked only now: the grace starts");
    assertEquals(1, first.unmarked());
    nanos.addAndGet(GRACE.toNanos() - 1);
    age(GRACE);
    assertEquals(List.of(), sweep(sweeper, directory).deleted(), "not before the grace has passed");
    nanos.addAndGet(1);
    assertEquals(List.of(parentFile), sweep(sweeper, directory).deleted());
    assertFalse(storage.exists(parentFile));

    assertEquals(50, rows(children.get(0)));
    assertEquals(50, rows(children.get(1)));
    server.abandon();
    open(storage);
    assertEquals(50, rows(server.tablet("l")));
    assertEquals(50, rows(server.tablet("r")));
    later();
    FileSweeper.Result after = sweep(sweeper, directory);
    assertEquals(List.of(), after.deleted(), "the children's own files stay: " + after);
  }

  /**
   * A split or merge parent's change log and manifest stay while a change stream may read them
   * (written to within 7 days and the grace: docs/change-streams.md), then go, folder and all.
   */
  @Test
  void aRetiredTabletsChangeLogAndManifestStayWhileYoungThenGo() throws Exception {
    Storage storage = new FileStorage(root);
    tabletA(storage);
    String retired = Tablet.dirOf("tbl", "old");
    String manifest = Storage.path(retired, "MANIFEST-0000000003");
    String segment = Storage.path(io.tabula.persistence.changes.ChangeLog.folder(retired), "x.chg");
    for (String f : List.of(manifest, segment)) {
      try (var out = storage.create(f)) {
        out.append(new byte[] {1});
      }
    }
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    sweep(sweeper, TABLET_A);
    later();
    FileSweeper.Result kept = sweep(sweeper, TABLET_A);
    assertEquals(List.of(), kept.deleted(), "the change log is young: " + kept);
    assertTrue(storage.exists(manifest) && storage.exists(segment));

    Path folder = root.resolve(io.tabula.persistence.changes.ChangeLog.folder(retired));
    Files.setLastModifiedTime(folder, FileTime.fromMillis(Files.getLastModifiedTime(folder).toMillis()
        - FileSweeper.MAX_CHANGE_RETENTION.toMillis() - GRACE.toMillis()));
    sweep(sweeper, TABLET_A);
    later();
    FileSweeper.Result gone = sweep(sweeper, TABLET_A);
    assertFalse(storage.exists(manifest), gone.toString());
    assertFalse(storage.exists(segment), gone.toString());
    assertFalse(storage.exists(retired), "the folder went with its files: " + gone);
  }

  @Test
  void aYoungFileAndATableWithAnUnreadableTabletAreLeftAlone() throws Exception {
    Storage storage = new FileStorage(root);
    Tablet t = tabletA(storage);
    // A file no manifest names yet, as a flush writes before it commits: young, so it stays.
    String stray = Storage.path(Tablet.dirOf("tbl", "a"), "999999.sst");
    try (var f = storage.create(stray)) {
      f.append(new byte[] {1, 2, 3});
    }
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    sweep(sweeper, Map.of("tbl", Set.of("a")));
    nanos.addAndGet(GRACE.toNanos());
    FileSweeper.Result r = sweep(sweeper, Map.of("tbl", Set.of("a")));
    assertEquals(1, r.unmarked());
    assertEquals(List.of(), r.deleted(), "written within the grace: it may be a file being written");
    assertTrue(storage.exists(stray));

    // From here on no grace and an old enough file: only the rules below keep it.
    age(Duration.ofMinutes(1));
    // The directory has a tablet whose folder has no manifest yet (it is being written): the
    // table is skipped, nothing goes.
    FileSweeper old = new FileSweeper(storage, Duration.ZERO, nanos::get);
    storage.createDirectories(Tablet.dirOf("tbl", "new"));
    FileSweeper.Result skipped = sweep(old, Map.of("tbl", Set.of("a", "new")));
    assertEquals(List.of("tbl"), skipped.tablesSkipped());
    assertTrue(storage.exists(stray));
    // A tablet that never opened (no folder) names no file and is not in the way: the stray
    // file goes and the tablet's own stays. (A table of pre-split tablets nobody used yet was
    // never swept.)
    assertEquals(List.of(stray), sweep(old, Map.of("tbl", Set.of("a", "never"))).deleted());
    assertEquals(1, rows(t));
  }

  @Test
  void aDeletedTablesFilesGoAfterTheGraceAndARecreatedTableUnderItsNameKeepsItsOwn() throws Exception {
    Storage storage = new FileStorage(root);
    open(storage);
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

    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    Map<String, Set<String>> directory = Map.of("tbl", Set.of("tbl-3"));
    FileSweeper.Result first = sweep(sweeper, directory);
    assertEquals(List.of(), first.deleted(), "nothing before the grace: " + first);
    assertTrue(first.unmarked() >= 4, "the old tablets' SSTables and manifests are unmarked: " + first);
    later();
    FileSweeper.Result second = sweep(sweeper, directory);
    assertTrue(second.deleted().stream().allMatch(p -> p.startsWith("tables/tbl/tbl-1/")
        || p.startsWith("tables/tbl/tbl-2/") || p.startsWith("tables/gone/")), second.toString());
    assertFalse(storage.exists("tables/tbl/tbl-1"), "the old tablet's folder went with its files: "
        + storage.list("tables/tbl/tbl-1") + " " + second);
    assertFalse(storage.exists("tables/tbl/tbl-2"));
    assertFalse(storage.exists("tables/gone"), "a deleted table's folder goes once empty");
    assertEquals(List.of("tbl-3"), storage.list("tables/tbl"));
    assertEquals(1, rows(fresh), "the re-created table's tablet reads its row");
    later();
    assertEquals(List.of(), sweep(sweeper, directory).deleted(), "the new tablet's files stay");
  }

  /** A backup {@code id} of table {@code table} naming {@code files}, written as a backup is. */
  private static void backup(Storage storage, String id, String table, String... files) throws IOException {
    Map<String, List<io.tabula.persistence.backup.BackupManifest.FileEntry>> named = Map.of("default",
        java.util.Arrays.stream(files).map(f -> new io.tabula.persistence.backup.BackupManifest.FileEntry(f, 3))
            .toList());
    io.tabula.persistence.backup.BackupManifestCodec.write(storage, new io.tabula.persistence.backup.BackupManifest(id,
        table, 1_000_000L, 1_000_000L, false, SCHEMA, List.of(new io.tabula.persistence.backup.BackupManifest.TabletFiles(new byte[0],
            new byte[0], named, 0, 0))));
  }

  /** The SSTables tablet {@code id} of {@code table} names now. */
  private static List<String> sstables(Storage storage, String table, String id) throws IOException {
    List<String> out = new ArrayList<>();
    ManifestCodec.read(storage, Tablet.dirOf(table, id)).groups().values()
        .forEach(l -> l.forEach(r -> out.add(r.path())));
    return out;
  }

  @Test
  void aFileABackupNamesOutlivesItsTableAndGoesWithTheBackup() throws Exception {
    Storage storage = new FileStorage(root);
    tabletA(storage);
    List<String> files = sstables(storage, "tbl", "a");
    assertEquals(1, files.size());
    backup(storage, "b1", "tbl", files.get(0));
    server.closeTable("tbl");
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    Map<String, Set<String>> none = Map.of();
    sweep(sweeper, none);
    later();
    FileSweeper.Result r = sweep(sweeper, none);
    assertTrue(storage.exists(files.get(0)), "the backup's file stays: " + r);
    assertTrue(r.deleted().stream().anyMatch(p -> p.contains("MANIFEST")), "the deleted table's manifest goes: " + r);
    later();
    assertTrue(storage.exists(files.get(0)), "and stays: " + sweep(sweeper, none));

    // The backup is deleted (its manifest first): the file goes a grace later.
    storage.delete(io.tabula.persistence.backup.BackupManifestCodec.path("b1"));
    storage.delete(io.tabula.persistence.backup.BackupManifestCodec.folder("b1"));
    sweep(sweeper, none);
    later();
    FileSweeper.Result gone = sweep(sweeper, none);
    assertEquals(List.of(files.get(0)), gone.deleted());
    assertFalse(storage.exists("tables/tbl"), "the table's folder went once empty");
  }

  @Test
  void aRestoredTableKeepsTheFilesItNamesInAnotherTablesFolders() throws Exception {
    Storage storage = new FileStorage(root);
    Tablet source = tabletA(storage);
    String file = sstables(storage, "tbl", "a").get(0);
    // A table made from a backup of "tbl": its tablet names the file, which it did not write.
    Tablet copy = server.createTablet("copy", "c1", new byte[0], new byte[0]);
    copy.freezeAndFlush().join();
    name(storage, Tablet.dirOf("copy", "c1"), file);
    server.closeTable("tbl");
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    Map<String, Set<String>> directory = Map.of("copy", Set.of("c1"));
    sweep(sweeper, directory);
    later();
    FileSweeper.Result r = sweep(sweeper, directory);
    assertTrue(storage.exists(file), "the restored table names it: " + r);
    assertTrue(r.deleted().stream().anyMatch(p -> p.startsWith("tables/tbl/a/MANIFEST")), r.toString());
    later();
    assertTrue(storage.exists(file), "and keeps it: " + sweep(sweeper, directory));
    assertTrue(source != null);
  }

  @Test
  void expiredAndUnfinishedBackupsGoAndTheirFilesWithTheSweepsAfter() throws Exception {
    Storage storage = new FileStorage(root);
    tabletA(storage);
    String file = sstables(storage, "tbl", "a").get(0);
    server.closeTable("tbl");
    long now = 2_000_000_000_000_000L;
    backup(storage, "old", "tbl", file);
    io.tabula.persistence.backup.BackupExpiry.write(storage, "old", 1, new io.tabula.persistence.backup.BackupExpiry(
        now - 1, 0));
    backup(storage, "kept", "tbl");
    io.tabula.persistence.backup.BackupExpiry.write(storage, "kept", 1, new io.tabula.persistence.backup.BackupExpiry(
        now + 1, 0));
    // Two backups never finished (an expiry, no manifest): one a day old, one being made now.
    for (String id : List.of("abandoned", "making")) {
      storage.createDirectories("backups/" + id);
      io.tabula.persistence.backup.BackupExpiry.write(storage, id, 1, new io.tabula.persistence.backup.BackupExpiry(
          now + 1, 0));
    }
    Path abandoned = root.resolve("backups/abandoned/EXPIRY-0000000001");
    Files.setLastModifiedTime(abandoned, FileTime.fromMillis(System.currentTimeMillis() - Duration.ofHours(25)
        .toMillis()));
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    // A damaged expiry keeps no other backup from expiring.
    backup(storage, "damaged", "tbl");
    try (WritableFile f = storage.create("backups/damaged/EXPIRY-0000000001")) {
      f.append(new byte[] {1, 2, 3});
    }
    assertEquals(List.of(), sweeper.expireBackups(now, () -> false).deleted(), "a node that is not the master deletes none");
    FileSweeper.Expired expired = sweeper.expireBackups(now, master::get);
    assertEquals(List.of("abandoned", "old"), expired.deleted());
    assertEquals(1, expired.problems().size(), expired.problems().toString());
    assertTrue(expired.problems().get(0).startsWith("damaged: "), expired.problems().toString());
    storage.delete("backups/damaged/EXPIRY-0000000001");
    storage.delete(io.tabula.persistence.backup.BackupManifestCodec.path("damaged"));
    storage.delete("backups/damaged");
    assertEquals(List.of("kept", "making"), storage.list("backups"));
    assertTrue(storage.exists(file), "the expired backup's file waits for the sweeps");
    sweep(sweeper, Map.of());
    later();
    assertTrue(sweep(sweeper, Map.of()).deleted().contains(file), "and goes a grace later");
  }

  /**
   * A table restored while a sweep runs (in the directory only when the sweep marks again)
   * keeps the files it names in another table's folders: the sweep marks every table made since
   * it began before it deletes.
   */
  @Test
  void aTableRestoredDuringASweepKeepsTheFilesItNames() throws Exception {
    Storage storage = new FileStorage(root);
    tabletA(storage);
    String file = sstables(storage, "tbl", "a").get(0);
    Tablet copy = server.createTablet("copy", "c1", new byte[0], new byte[0]);
    copy.freezeAndFlush().join();
    name(storage, Tablet.dirOf("copy", "c1"), file);
    server.closeTable("tbl");
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    // The first sweep's directory has neither table: the file is unnamed from then on.
    sweep(sweeper, Map.of());
    later();
    java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
    FileSweeper.Result r = sweeper.sweep(marks, () -> asked.getAndIncrement() == 0 ? Map.of()
        : Map.of("copy", Set.of("c1")), master::get);
    assertTrue(asked.get() > 1, "the sweep asked the directory again before deleting");
    assertTrue(storage.exists(file), "the table made meanwhile names it: " + r);
  }

  @Test
  void anUnreadableBackupManifestStopsEveryDeletion() throws Exception {
    Storage storage = new FileStorage(root);
    tabletA(storage);
    server.closeTable("tbl");
    storage.createDirectories("backups/broken");
    try (WritableFile f = storage.create(io.tabula.persistence.backup.BackupManifestCodec.path("broken"))) {
      f.append(new byte[] {1, 2, 3});
    }
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    sweep(sweeper, Map.of());
    later();
    FileSweeper.Result r = sweep(sweeper, Map.of());
    assertEquals(List.of(), r.deleted(), "a backup that cannot be read may name any file");
    assertEquals(List.of("tbl"), r.tablesSkipped());
    assertTrue(storage.exists(Tablet.dirOf("tbl", "a")));
  }

  /** Opens {@link #server} over {@code storage}. */
  private void open(Storage storage) throws IOException {
    server = TabletServer.open(storage, TabletServer.Options.defaults("n1"), () -> 5_000_000L, t -> SCHEMA,
        (what, e) -> { });
  }

  /** A tablet "a" of table "tbl", on a server over {@code storage}, with one row in one flushed SSTable. */
  private Tablet tabletA(Storage storage) throws IOException {
    open(storage);
    Tablet t = server.createTablet("tbl", "a", new byte[0], new byte[0]);
    t.apply(put("x")).join();
    t.freezeAndFlush().join();
    return t;
  }

  /** Writes a few bytes at {@code path}, last written {@code age} ago by the file system's clock. */
  private void stray(String path, Duration age) throws IOException {
    try (WritableFile f = new FileStorage(root).create(path)) {
      f.append(new byte[] {1, 2, 3});
    }
    Files.setLastModifiedTime(root.resolve(path), FileTime.fromMillis(System.currentTimeMillis() - age.toMillis()));
  }

  /** Adds {@code file} to the newest manifest of {@code dir}, as a compaction's commit names its output. */
  private static void name(Storage storage, String dir, String file) throws IOException {
    ManifestCodec.Versioned v = ManifestCodec.readVersioned(storage, dir);
    TabletManifest m = v.manifest();
    Map<String, List<TabletManifest.FileRef>> groups = new TreeMap<>(m.groups());
    List<TabletManifest.FileRef> refs = new ArrayList<>(groups.getOrDefault("default", List.of()));
    refs.add(new TabletManifest.FileRef(file, true));
    groups.put("default", refs);
    ManifestCodec.commit(storage, dir, m.withFiles(groups, m.redoPoint(), m.lastSequence(), m.maxServerTime(), m.nextFileNumber() + 1),
        v.version());
  }

  /**
   * H4 (docs/fencing.md, "A frozen master"): the sweep re-reads the manifests right before it
   * deletes, so a file a manifest came to name while the sweep ran (its master paused between
   * marking and deleting, with every clock past the grace) stays. The storage names the file
   * at the first look at its age, which stands for that pause.
   */
  @Test
  void aFileAManifestNamesBetweenMarkingAndDeletingStays() throws Exception {
    Storage disk = new FileStorage(root);
    tabletA(disk);
    String dir = Tablet.dirOf("tbl", "a");
    // A compaction's output, written long ago and not named yet: its commit is late.
    String late = Storage.path(dir, "000099.sst");
    stray(late, GRACE.multipliedBy(2));
    AtomicBoolean paused = new AtomicBoolean();
    Storage storage = new ForwardingStorage(disk) {
      @Override
      public long modifiedMillis(String path) throws IOException {
        if (path.equals(late) && paused.compareAndSet(false, true)) {
          name(disk, dir, late); // meanwhile the compaction committed
        }
        return super.modifiedMillis(path);
      }
    };
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    Map<String, Set<String>> directory = Map.of("tbl", Set.of("a"));
    assertEquals(List.of(), sweep(sweeper, directory).deleted(), "unmarked only now: the grace starts");
    nanos.addAndGet(GRACE.toNanos());
    FileSweeper.Result r = sweep(sweeper, directory);
    assertTrue(paused.get(), "the sweep looked at the file's age");
    assertEquals(List.of(), r.deleted(), "the file a manifest names now stays");
    assertTrue(disk.exists(late));
    assertTrue(ManifestCodec.read(disk, dir).files("default").stream().anyMatch(f -> f.path().equals(late)));
  }

  /** A storage whose clock is {@code skewMillis} away from this machine's: every modification time it reports is. */
  private static Storage skewed(Storage disk, long skewMillis) {
    return new ForwardingStorage(disk) {
      @Override
      public long modifiedMillis(String path) throws IOException {
        return super.modifiedMillis(path) + skewMillis;
      }
    };
  }

  /**
   * S9 (docs/fencing.md, the sweep's clocks): a file's age is judged by the storage's clock
   * alone, so a storage an hour ahead of this machine, or an hour behind, still has its young
   * files kept and its old ones taken.
   */
  @Test
  void aStorageWhoseClockIsFarFromThisMachinesKeepsYoungFilesAndLosesOldOnes() throws Exception {
    Storage disk = new FileStorage(root);
    open(disk);
    server.createTablet("tbl", "a", new byte[0], new byte[0]).freezeAndFlush().join();
    Map<String, Set<String>> directory = Map.of("tbl", Set.of("a"));
    for (long skew : new long[] {-Duration.ofHours(1).toMillis(), Duration.ofHours(1).toMillis()}) {
      String young = Storage.path(Tablet.dirOf("tbl", "a"), "young" + skew + ".sst");
      String old = Storage.path(Tablet.dirOf("tbl", "a"), "old" + skew + ".sst");
      stray(young, Duration.ZERO);
      stray(old, GRACE.multipliedBy(2));
      FileSweeper sweeper = new FileSweeper(skewed(disk, skew), GRACE, nanos::get);
      sweep(sweeper, directory);
      nanos.addAndGet(GRACE.toNanos());
      assertEquals(List.of(old), sweep(sweeper, directory).deleted(), "storage clock " + skew + " ms from ours");
      assertTrue(disk.exists(young));
      disk.delete(young);
    }
  }

  /** A tablet "a" of table "tbl" with one flushed SSTable, and an old SSTable no manifest names in its folder. */
  private String tabletWithAnOldStray(Storage storage) throws IOException {
    tabletA(storage);
    String stray = Storage.path(Tablet.dirOf("tbl", "a"), "000099.sst");
    stray(stray, GRACE.multipliedBy(2));
    return stray;
  }

  /** The one tablet of {@link #tabletWithAnOldStray}. */
  private static final Map<String, Set<String>> TABLET_A = Map.of("tbl", Set.of("a"));

  /** That {@code r} stopped for {@code why} and deleted nothing: {@code stray} is there. */
  private static void assertStopped(FileSweeper.Outcome why, FileSweeper.Result r, Storage storage, String stray) {
    assertEquals(why, r.outcome(), r.toString());
    assertEquals(List.of(), r.deleted());
    assertTrue(storage.exists(stray));
  }

  /** A sweeper over {@code storage} whose first sweep over {@link #TABLET_A} was a grace ago. */
  private FileSweeper sweptAGraceAgo(Storage storage) throws IOException {
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    sweep(sweeper, TABLET_A);
    nanos.addAndGet(GRACE.toNanos());
    return sweeper;
  }

  /**
   * H4: the sweep deletes only while this node is still the master. A sweep whose master's
   * check fails before its deletions deletes nothing; the next, as master again, does.
   */
  @Test
  void aSweepWhoseMasterCheckFailsDeletesNothing() throws Exception {
    Storage storage = new FileStorage(root);
    String stray = tabletWithAnOldStray(storage);
    FileSweeper sweeper = sweptAGraceAgo(storage);
    master.set(false);
    assertStopped(FileSweeper.Outcome.NOT_MASTER, sweep(sweeper, TABLET_A), storage, stray);
    master.set(true);
    FileSweeper.Result again = sweep(sweeper, TABLET_A);
    assertEquals(FileSweeper.Outcome.FINISHED, again.outcome());
    assertEquals(List.of(stray), again.deleted());
  }

  /**
   * H4: a sweep that has run longer than a quarter of the grace (by the monotonic clock) when
   * it comes to delete stops: its listing and marks are too old to act on.
   */
  @Test
  void aSweepThatRanTooLongStopsBeforeDeleting() throws Exception {
    Storage disk = new FileStorage(root);
    String stray = tabletWithAnOldStray(disk);
    AtomicBoolean slow = new AtomicBoolean();
    Storage storage = new ForwardingStorage(disk) {
      @Override
      public List<String> list(String dir) throws IOException {
        if (dir.equals("tables") && slow.getAndSet(false)) {
          nanos.addAndGet(GRACE.toNanos() / 4 + 1); // the listing took that long (a pause, a slow storage)
        }
        return super.list(dir);
      }
    };
    FileSweeper sweeper = sweptAGraceAgo(storage);
    slow.set(true);
    assertStopped(FileSweeper.Outcome.TOO_SLOW, sweep(sweeper, TABLET_A), storage, stray);
    assertEquals(List.of(stray), sweep(sweeper, TABLET_A).deleted(), "a quick sweep takes it");
  }

  /**
   * H4: marks do not outlive their master. A file found unmarked under one master is not
   * deleted by the next master's first sweep that finds it so, however long ago the first
   * found it: the new master's grace starts afresh.
   */
  @Test
  void aNewMastersSweepsStartTheGraceAfresh() throws Exception {
    Storage storage = new FileStorage(root);
    String stray = tabletWithAnOldStray(storage);
    FileSweeper sweeper = sweptAGraceAgo(storage); // the first master found it unmarked
    FileSweeper.Marks next = new FileSweeper.Marks();
    assertEquals(List.of(), sweeper.sweep(next, () -> TABLET_A, () -> true).deleted(), "the next master's first look");
    assertTrue(storage.exists(stray));
    nanos.addAndGet(GRACE.toNanos());
    assertEquals(List.of(stray), sweeper.sweep(next, () -> TABLET_A, () -> true).deleted());
  }

  /**
   * H4: the sweep asks for the master's directory again before it deletes. A tablet recorded
   * meanwhile (a split's child whose folder, written long before, the sweep listed as no
   * tablet's) keeps its manifest.
   */
  @Test
  void aTabletRecordedBetweenMarkingAndDeletingKeepsItsFolder() throws Exception {
    Storage disk = new FileStorage(root);
    open(disk);
    for (String id : List.of("a", "b")) {
      server.createTablet("tbl", id, new byte[0], new byte[0]).freezeAndFlush().join();
    }
    age(GRACE.multipliedBy(2));
    String manifest = ManifestCodec.path(Tablet.dirOf("tbl", "b"), ManifestCodec.readVersioned(disk,
        Tablet.dirOf("tbl", "b")).version());
    AtomicBoolean recorded = new AtomicBoolean();
    Storage storage = new ForwardingStorage(disk) {
      @Override
      public long modifiedMillis(String path) throws IOException {
        if (path.equals(manifest)) {
          recorded.set(true); // meanwhile the master recorded b
        }
        return super.modifiedMillis(path);
      }
    };
    FileSweeper sweeper = new FileSweeper(storage, GRACE, nanos::get);
    Map<String, Set<String>> before = Map.of("tbl", Set.of("a"));
    Map<String, Set<String>> after = Map.of("tbl", Set.of("a", "b"));
    sweeper.sweep(marks, () -> recorded.get() ? after : before, () -> true);
    nanos.addAndGet(GRACE.toNanos());
    FileSweeper.Result r = sweeper.sweep(marks, () -> recorded.get() ? after : before, () -> true);
    assertTrue(recorded.get(), "the sweep looked at the manifest's age");
    assertEquals(List.of(), r.deleted(), "b's files stay: " + r);
    assertTrue(ManifestCodec.exists(disk, Tablet.dirOf("tbl", "b")));
  }
}
