package io.tabula.persistence.tablet;

import io.tabula.persistence.backup.BackupManifest;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * What backups need of tablets (docs/backups.md): a tablet's listing for a backup, and the
 * first manifest of a tablet restored from one. Stateless.
 */
public final class TabletBackups {
  private TabletBackups() {}

  /**
   * What a backup needs of tablet {@code t} (docs/backups.md): freezes the memtable, flushes every
   * frozen one, then disowns and lists the tablet's SSTables with their lengths. Every write this
   * tablet acknowledged before the call is in the files listed. The listing and its manifest
   * commit run on the background executor; the answer fails if the tablet closed or split first.
   */
  public static CompletableFuture<BackupManifest.TabletFiles> list(Tablet t) {
    return t.freezeAndFlush().thenApplyAsync(flushed -> {
      try {
        Map<String, List<BackupManifest.FileEntry>> out = new HashMap<>();
        TabletFiles.Disowned listed = t.fileSet().disownAll();
        for (Map.Entry<String, List<String>> g : listed.files().entrySet()) {
          List<BackupManifest.FileEntry> entries = new ArrayList<>();
          for (String p : g.getValue()) {
            entries.add(new BackupManifest.FileEntry(p, t.env.storage().size(p)));
          }
          out.put(g.getKey(), entries);
        }
        return new BackupManifest.TabletFiles(t.startRow(), t.endRow(), out, listed.lastSequence(),
            listed.maxServerTime());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, t.env.background());
  }

  /**
   * Writes the first manifest of a tablet restored from a backup (docs/backups.md), without
   * opening it: rows {@code [startRow, endRow)}, the backup's {@code files} by locality group
   * (newest first), none of them owned, so the tablet never deletes them; its sequence starts
   * past {@code lastSequence} (the files' cells keep the sequence numbers their writes took,
   * which a read compares with the tablet's) and its server-assigned timestamps are never below
   * {@code maxServerTime}. If the tablet has a manifest already (a restore tried again), that
   * one stays.
   */
  public static void createRestored(Storage storage, String table, String tabletId, byte[] startRow, byte[] endRow,
      Map<String, List<String>> files, long lastSequence, long maxServerTime) throws IOException {
    Map<String, List<TabletManifest.FileRef>> groups = new TreeMap<>();
    files.forEach((g, paths) -> groups.put(g, paths.stream().map(p -> new TabletManifest.FileRef(p, false)).toList()));
    TabletManifest m = new TabletManifest(table, tabletId, startRow, endRow, TabletManifest.State.ACTIVE,
        lastSequence, lastSequence, maxServerTime, 1, groups, null);
    ManifestCodec.create(storage, Tablet.dirOf(table, tabletId), m);
  }
}
