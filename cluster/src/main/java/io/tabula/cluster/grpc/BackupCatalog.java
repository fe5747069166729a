package io.tabula.cluster.grpc;

import io.tabula.persistence.backup.BackupExpiry;
import io.tabula.persistence.backup.BackupManifest;
import io.tabula.persistence.backup.BackupManifestCodec;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What ListBackups needs of every backup, kept between listings so that a page of a listing of
 * 10,000 backups does not read 10,000 manifests (docs/backups.md, "Listing"). Each listing still
 * looks at every backup's folder (one listing of the folder and the manifest's modification time:
 * two storage calls a backup, no file read), and reads a backup's manifest and expiry again only
 * when what it saw changed:
 * <ul>
 *   <li>the manifest is immutable once written, so its modification time names it: a backup
 *       deleted and made again under the same id has a new manifest, written later (a delete and
 *       a new backup's expiry, listing and manifest within one millisecond of the old manifest's
 *       writing is the case this does not tell apart);
 *   <li>an expiry change writes the next version, a new file name.
 * </ul>
 * Entries of backups no longer there are dropped at each listing, so the cache holds at most one
 * summary (a few hundred bytes) per backup the storage root has. A backup whose manifest or
 * expiry is damaged is left out and logged, and not cached.
 *
 * <p>Thread-safe: the map is concurrent and its entries immutable; two listings at once may both
 * read a changed backup, and either's entry is right.
 */
final class BackupCatalog {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(BackupCatalog.class);

  /** A backup's manifest and expiry, as they were when its folder showed {@code manifestMillis} and {@code expiry}. */
  record Entry(String id, long manifestMillis, long expiryVersion, Summary summary, BackupExpiry expiry) {}

  /** What a listing shows of a backup's manifest. */
  record Summary(String sourceTable, long startMicros, long snapshotMicros, boolean hot, long bytes,
      String sourceBackup) {
    static Summary of(BackupManifest m) {
      return new Summary(m.sourceTable(), m.startMicros(), m.snapshotMicros(), m.hot(), m.bytes(), m.sourceBackup());
    }
  }

  private final Storage storage;
  /** By backup id; owned by no one thread (see the class comment). */
  private final ConcurrentHashMap<String, Entry> byId = new ConcurrentHashMap<>();

  BackupCatalog(Storage storage) {
    this.storage = storage;
  }

  /**
   * Every backup with a manifest, in id order. Blocks on storage. A backup deleted while this
   * looks is left out.
   */
  List<Entry> all() throws IOException {
    List<String> ids = storage.list(BackupManifestCodec.FOLDER);
    List<Entry> out = new ArrayList<>(ids.size());
    Set<String> seen = new HashSet<>();
    for (String id : ids) {
      seen.add(id);
      try {
        Entry e = look(id);
        if (e != null) {
          out.add(e);
        }
      } catch (java.nio.file.NoSuchFileException gone) {
        byId.remove(id); // deleted between the listing and the look
      } catch (io.tabula.persistence.storage.CorruptionException damaged) {
        byId.remove(id);
        LOG.warn("ListBackups leaves out backup {}: {}", id, damaged.getMessage());
      }
    }
    byId.keySet().retainAll(seen);
    return out;
  }

  /** Entries held now (for tests and the docs' figures). */
  int size() {
    return byId.size();
  }

  private Entry look(String id) throws IOException {
    List<String> names = storage.list(BackupManifestCodec.folder(id));
    if (!names.contains(BackupManifestCodec.NAME)) {
      byId.remove(id);
      return null; // being made or deleted
    }
    long expiryVersion = BackupExpiry.newestVersion(names);
    if (expiryVersion < 0) {
      byId.remove(id);
      return null; // being deleted: the manifest goes first, and the expiry is written before it
    }
    long millis = storage.modifiedMillis(BackupManifestCodec.path(id));
    Entry e = byId.get(id);
    if (e != null && e.manifestMillis() == millis && e.expiryVersion() == expiryVersion) {
      return e;
    }
    Summary m = e != null && e.manifestMillis() == millis ? e.summary()
        : Summary.of(BackupManifestCodec.read(storage, id));
    BackupExpiry.Versioned x = BackupExpiry.read(storage, id, names);
    Entry fresh = new Entry(id, millis, x.version(), m, x.expiry());
    byId.put(id, fresh);
    return fresh;
  }
}
