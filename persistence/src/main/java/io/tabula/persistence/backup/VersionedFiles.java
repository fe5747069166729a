package io.tabula.persistence.backup;

import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.util.List;
import java.util.UUID;

/**
 * What a backup keeps beside its manifest and may change (its expiry, its IAM policy): files
 * {@code <PREFIX><version, ten digits>} in the backup's folder, the newest version the truth.
 * A change writes the next version exclusively (under a temporary name, synced, renamed only if
 * that version does not exist yet), so of two changes from one version one fails; then the
 * older versions are deleted. Stateless.
 */
final class VersionedFiles {
  private VersionedFiles() {}

  /** Writes {@code bytes} as version {@code version} of backup {@code id}'s {@code prefix} files; false if it exists. */
  static boolean write(Storage storage, String id, String prefix, long version, byte[] bytes) throws IOException {
    String dir = BackupManifestCodec.folder(id);
    String temp = Storage.path(dir, prefix + "tmp-" + UUID.randomUUID());
    try (WritableFile f = storage.createNew(temp)) {
      f.append(bytes);
      f.sync();
    }
    if (!storage.renameIfAbsent(temp, path(id, prefix, version))) {
      return false;
    }
    storage.syncDirectory(dir);
    for (String name : storage.list(dir)) {
      long v = versionOf(prefix, name);
      if (v >= 0 && v < version) {
        storage.delete(Storage.path(dir, name));
      }
    }
    return true;
  }

  /** The newest version among a backup folder's {@code names}; -1 if none. */
  static long newest(String prefix, List<String> names) {
    long newest = -1;
    for (String name : names) {
      newest = Math.max(newest, versionOf(prefix, name));
    }
    return newest;
  }

  static String path(String id, String prefix, long version) {
    return Storage.path(BackupManifestCodec.folder(id), prefix + String.format("%010d", version));
  }

  /** The version a file's name gives; -1 for any other name. */
  static long versionOf(String prefix, String name) {
    if (!name.startsWith(prefix) || name.length() != prefix.length() + 10) {
      return -1;
    }
    try {
      return Long.parseLong(name.substring(prefix.length()));
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
