package io.tabula.persistence.backup;

import io.tabula.persistence.schema.TableSchema;
import java.util.List;
import java.util.Map;

/**
 * What a backup of a table is (docs/backups.md): the table's schema and, for each tablet the
 * table had at the backup's snapshot, its row range and the SSTables holding its rows then, by
 * locality group, newest first. No data is copied: the SSTables are the table's own, kept by
 * the master's file sweep for as long as a backup names them (docs/formats/backup-manifest.md).
 * Immutable.
 *
 * @param startMicros when the backup began (µs since the epoch): every write acknowledged
 *     before it is in the backup
 * @param snapshotMicros when the last tablet was listed: no write that began after it is in
 *     the backup
 * @param hot whether it was made as Cloud Bigtable's HOT backup (restores are equally quick
 *     either way here: nothing is copied)
 * @param tablets in row order, covering every row once
 */
public record BackupManifest(String backupId, String sourceTable, long startMicros, long snapshotMicros, boolean hot,
    TableSchema schema, List<TabletFiles> tablets, String sourceBackup) {
  public BackupManifest {
    tablets = List.copyOf(tablets);
    sourceBackup = sourceBackup == null ? "" : sourceBackup;
  }

  /** A backup made from its table (not copied from another backup). */
  public BackupManifest(String backupId, String sourceTable, long startMicros, long snapshotMicros, boolean hot,
      TableSchema schema, List<TabletFiles> tablets) {
    this(backupId, sourceTable, startMicros, snapshotMicros, hot, schema, tablets, "");
  }

  /** One SSTable: its path under the storage root and its length in bytes when the backup named it. */
  public record FileEntry(String path, long bytes) {}

  /**
   * A tablet's rows {@code [startRow, endRow)} (an empty end: the end of the table) and its
   * SSTables by locality group, newest first; rows of a file outside the range are not the
   * tablet's (files shared after a split hold their sibling's rows too).
   *
   * @param lastSequence the highest sequence number the tablet had assigned when listed: no
   *     cell in the files has a higher one (a restored tablet starts past it)
   * @param maxServerTime the highest server-assigned timestamp (µs) the tablet had handed out:
   *     a restored tablet never hands out a lower one
   */
  public record TabletFiles(byte[] startRow, byte[] endRow, Map<String, List<FileEntry>> files, long lastSequence,
      long maxServerTime) {
    public TabletFiles {
      files = Map.copyOf(files);
    }

    /** The same files for the rows from {@code start} on (the walk's row: an earlier part was listed before). */
    public TabletFiles from(byte[] start) {
      return new TabletFiles(start, endRow, files, lastSequence, maxServerTime);
    }
  }

  /** Every SSTable path the backup names. */
  public java.util.Set<String> paths() {
    java.util.Set<String> out = new java.util.HashSet<>();
    tablets.forEach(t -> t.files().values().forEach(l -> l.forEach(f -> out.add(f.path()))));
    return out;
  }

  /** The bytes of every distinct SSTable the backup names. */
  public long bytes() {
    Map<String, Long> sizes = new java.util.HashMap<>();
    tablets.forEach(t -> t.files().values().forEach(l -> l.forEach(f -> sizes.put(f.path(), f.bytes()))));
    return sizes.values().stream().mapToLong(Long::longValue).sum();
  }
}
