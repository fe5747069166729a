package io.tabula.client;

import java.time.Instant;

/**
 * A backup as the admin API describes it (docs/backups.md): its id, the table it was made of,
 * when it began and when its snapshot was taken, when it expires, its size and state. Immutable.
 *
 * @param end every write that began after it is not in the backup
 */
public record BackupDescription(String backupId, String sourceTable, Instant start, Instant end, Instant expire,
    long sizeBytes, String state) {
  static BackupDescription of(com.google.bigtable.admin.v2.Backup b) {
    return new BackupDescription(b.getName().substring(b.getName().lastIndexOf('/') + 1),
        b.getSourceTable().substring(b.getSourceTable().lastIndexOf('/') + 1), instant(b.getStartTime()),
        instant(b.getEndTime()), instant(b.getExpireTime()), b.getSizeBytes(), b.getState().name());
  }

  private static Instant instant(com.google.protobuf.Timestamp t) {
    return Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
  }
}
