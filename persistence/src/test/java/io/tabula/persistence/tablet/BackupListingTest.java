package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.backup.BackupManifest;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tablet's listing for a backup (docs/backups.md): every write acknowledged before it is in
 * the files listed, each with its length; the files are disowned in the tablet's manifest, so
 * neither this tablet nor a later owner deletes them when a compaction replaces them, while a
 * file written after the listing is owned and deleted as usual.
 */
class BackupListingTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));

  @TempDir
  Path root;

  private TabletServer server;

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

  private void open(Storage storage) throws IOException {
    server = TabletServer.open(storage, TabletServer.Options.defaults("n1"), () -> 5_000_000L, t -> SCHEMA,
        (what, e) -> { });
  }

  private static Set<String> paths(BackupManifest.TabletFiles listed) {
    Set<String> out = new TreeSet<>();
    listed.files().values().forEach(l -> l.forEach(f -> out.add(f.path())));
    return out;
  }

  private static int rowsIn(Storage storage, Set<String> files) throws IOException {
    int n = 0;
    for (String f : files) {
      try (io.tabula.persistence.sstable.SSTableReader r = io.tabula.persistence.sstable.SSTableReader.open(
          storage.open(f), null, false)) {
        n += (int) r.info().entries();
      }
    }
    return n;
  }

  @Test
  void theListedFilesHoldEveryEarlierWriteAndOutliveTheCompactionsThatReplaceThem() throws Exception {
    Storage storage = new FileStorage(root);
    open(storage);
    Tablet t = server.createTablet("tbl", "a", new byte[0], new byte[0]);
    t.apply(put("r1")).join();
    t.freezeAndFlush().join();
    t.apply(put("r2")).join(); // still in the memtable when the backup begins

    BackupManifest.TabletFiles listed = TabletBackups.list(t).join();
    Set<String> files = paths(listed);
    assertEquals(2, files.size(), "the flushed file and the memtable's: " + listed.files());
    for (List<BackupManifest.FileEntry> l : listed.files().values()) {
      for (BackupManifest.FileEntry f : l) {
        assertEquals(storage.size(f.path()), f.bytes(), f.path());
      }
    }
    assertEquals(2, rowsIn(storage, files), "both acknowledged writes are in the listed files");
    assertTrue(listed.lastSequence() >= 2, "the listing's last sequence covers its files': " + listed.lastSequence());
    ManifestCodec.read(storage, Tablet.dirOf("tbl", "a")).groups().values()
        .forEach(l -> l.forEach(r -> assertFalse(r.owned(), r.path() + " is still owned")));

    // Writes after the listing, and a compaction that replaces every file.
    t.apply(put("r3")).join();
    t.freezeAndFlush().join();
    Set<String> later = new TreeSet<>(t.files().get("default"));
    later.removeAll(files);
    t.majorCompact().join();
    for (String f : files) {
      assertTrue(storage.exists(f), f + " was deleted though a backup names it");
    }
    for (String f : later) {
      assertFalse(storage.exists(f), f + ", written after the listing, is the tablet's to delete");
    }

    // A later owner reads the disowned files from the manifest, and does not delete them either.
    server.closeTablet("a");
    server.abandon();
    open(storage);
    Tablet again = server.openTablet("tbl", "a", new byte[0], new byte[0], List.of()).tablet();
    again.apply(put("r4")).join();
    again.freezeAndFlush().join();
    again.majorCompact().join();
    files.forEach(f -> assertTrue(storage.exists(f), f + " was deleted by the tablet's next owner"));
    List<String> rows = new ArrayList<>();
    try (RowScanner s = again.scan(new byte[0], new byte[0], ReadFilter.all())) {
      for (Row r = s.next(); r != null; r = s.next()) {
        rows.add(new String(r.key(), StandardCharsets.UTF_8));
      }
    }
    assertEquals(List.of("r1", "r2", "r3", "r4"), rows);
  }
}
