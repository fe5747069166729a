package io.tabula.persistence.tablet;

import io.tabula.persistence.backup.BackupManifest;
import io.tabula.persistence.sstable.SSTableReader;
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
        for (Map.Entry<String, List<String>> g : t.fileSet().disownAll().entrySet()) {
          List<BackupManifest.FileEntry> entries = new ArrayList<>();
          for (String p : g.getValue()) {
            entries.add(new BackupManifest.FileEntry(p, t.env.storage().size(p)));
          }
          out.put(g.getKey(), entries);
        }
        return new BackupManifest.TabletFiles(t.startRow(), t.endRow(), out);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, t.env.background());
  }

  /**
   * Writes the first manifest of a tablet restored from a backup (docs/backups.md), without
   * opening it: rows {@code [startRow, endRow)}, the backup's {@code files} by locality group
   * (newest first), none of them owned, so the tablet never deletes them, and a floor of
   * {@code maxServerTime} for its server-assigned timestamps (the backup's snapshot: no cell in
   * its files was stamped later). Its sequence starts past the highest of its files' (each
   * file's footer is read). If the tablet has a manifest already (a restore tried again), that
   * one stays.
   */
  public static void createRestored(Storage storage, String table, String tabletId, byte[] startRow, byte[] endRow,
      Map<String, List<String>> files, long maxServerTime) throws IOException {
    Map<String, List<TabletManifest.FileRef>> groups = new TreeMap<>();
    long lastSequence = 0;
    for (Map.Entry<String, List<String>> g : files.entrySet()) {
      List<TabletManifest.FileRef> refs = new ArrayList<>();
      for (String p : g.getValue()) {
        refs.add(new TabletManifest.FileRef(p, false));
        try (SSTableReader r = SSTableReader.open(storage.open(p), null, false)) {
          lastSequence = Math.max(lastSequence, r.info().maxSequence());
        }
      }
      groups.put(g.getKey(), refs);
    }
    // The files' cells keep the sequence numbers their writes took, which a read compares with the tablet's
    // own: the tablet starts past the highest, as if it had written them.
    TabletManifest m = new TabletManifest(table, tabletId, startRow, endRow, TabletManifest.State.ACTIVE,
        lastSequence, lastSequence, maxServerTime, 1, groups, null);
    ManifestCodec.create(storage, Tablet.dirOf(table, tabletId), m);
  }
}
