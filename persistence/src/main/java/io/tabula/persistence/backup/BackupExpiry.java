package io.tabula.persistence.backup;

import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * What of a backup can change after it is made (Cloud Bigtable's {@code UpdateBackup}): when it
 * expires and, for a HOT backup, when it becomes STANDARD. Kept apart from the immutable
 * manifest, in versioned files {@code backups/<id>/EXPIRY-NNNNNNNNNN}: a change writes the next
 * version exclusively (two changes at once: one fails and is tried again from the newer), then
 * deletes the older ones (docs/formats/backup-manifest.md). Immutable.
 *
 * @param expireMicros when the master deletes the backup (µs since the epoch)
 * @param hotToStandardMicros when a HOT backup becomes STANDARD; 0: never
 */
public record BackupExpiry(long expireMicros, long hotToStandardMicros) {
  /** "TBLABEXP". */
  static final long MAGIC = 0x54424C4142455850L;
  static final int VERSION = 1;
  static final int BYTES = 8 + 4 + 8 + 8 + 4;
  static final String PREFIX = "EXPIRY-";

  /** A version of backup {@code id}'s expiry and what it says. */
  public record Versioned(long version, BackupExpiry expiry) {}

  /**
   * Writes {@code e} as version {@code version} of backup {@code id}'s expiry; false if that
   * version exists (someone else changed it first). Older versions are deleted after.
   */
  public static boolean write(Storage storage, String id, long version, BackupExpiry e) throws IOException {
    return VersionedFiles.write(storage, id, PREFIX, version, e.encode());
  }

  /** The newest version of backup {@code id}'s expiry. */
  public static Versioned read(Storage storage, String id) throws IOException {
    return read(storage, id, storage.list(BackupManifestCodec.folder(id)));
  }

  /** As {@link #read(Storage, String)}, given the names in the backup's folder (one listing serves several reads). */
  public static Versioned read(Storage storage, String id, List<String> names) throws IOException {
    long newest = newestVersion(names);
    if (newest < 0) {
      throw new java.nio.file.NoSuchFileException(Storage.path(BackupManifestCodec.folder(id), PREFIX + "*"));
    }
    String p = path(id, newest);
    byte[] b;
    try (ReadableFile r = storage.open(p)) {
      if (r.size() != BYTES) {
        throw new CorruptionException(p, 0, "file of " + r.size() + " bytes is not a backup expiry of " + BYTES);
      }
      b = r.readFully(0, BYTES);
    }
    return new Versioned(newest, decode(p, b));
  }

  /** The newest expiry version among {@code names} (a backup folder's); -1 if there is none. */
  public static long newestVersion(List<String> names) {
    return VersionedFiles.newest(PREFIX, names);
  }

  static String path(String id, long version) {
    return VersionedFiles.path(id, PREFIX, version);
  }

  /** The version an expiry file's name gives; -1 for any other name. */
  static long versionOf(String name) {
    return VersionedFiles.versionOf(PREFIX, name);
  }

  byte[] encode() {
    ByteBuffer b = ByteBuffer.allocate(BYTES);
    b.putLong(MAGIC).putInt(VERSION).putLong(expireMicros).putLong(hotToStandardMicros);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, BYTES - 4);
    b.putInt((int) crc.getValue());
    return b.array();
  }

  static BackupExpiry decode(String path, byte[] b) throws CorruptionException {
    ByteBuffer in = ByteBuffer.wrap(b);
    if (in.getLong(0) != MAGIC) {
      throw new CorruptionException(path, 0, "bad magic");
    }
    if (in.getInt(8) != VERSION) {
      throw new CorruptionException(path, 8, "unknown backup expiry version " + in.getInt(8));
    }
    CRC32C crc = new CRC32C();
    crc.update(b, 0, BYTES - 4);
    if ((int) crc.getValue() != in.getInt(BYTES - 4)) {
      throw new CorruptionException(path, BYTES - 4, "checksum mismatch");
    }
    return new BackupExpiry(in.getLong(12), in.getLong(20));
  }

  /** For tests: the names in {@code names} that are expiry versions. */
  static List<String> versions(List<String> names) {
    return names.stream().filter(n -> versionOf(n) >= 0).toList();
  }
}
