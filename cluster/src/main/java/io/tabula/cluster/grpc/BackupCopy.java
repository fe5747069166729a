package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.Backup;
import com.google.bigtable.admin.v2.BackupInfo;
import com.google.bigtable.admin.v2.CopyBackupMetadata;
import com.google.bigtable.admin.v2.CopyBackupRequest;
import com.google.bigtable.admin.v2.OperationProgress;
import com.google.longrunning.Operation;
import com.google.protobuf.Any;
import io.tabula.persistence.backup.BackupExpiry;
import io.tabula.persistence.backup.BackupFileCopy;
import io.tabula.persistence.backup.BackupManifest;
import io.tabula.persistence.backup.BackupManifestCodec;
import io.tabula.persistence.storage.Storage;
import io.tabula.protocol.errors.ErrorCode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cloud Bigtable's {@code CopyBackup} (docs/backups.md, "Copying"). A source backup of this
 * instance is copied by a new manifest naming the same SSTables (nothing is copied; the sweep
 * keeps them while either backup names them). A source backup of another instance, whose
 * storage root {@code tabula.backup.copy-sources} names ({@link CopySources}), is copied file by
 * file into this root under fresh names ({@code tables/<source table>/copy-<random>/NNNNNN.sst},
 * which no tablet owns: the sweep keeps them while a manifest names them), each checked by CRC32C
 * ({@link BackupFileCopy}); a mismatch is DATA_LOSS. Either way the backup is written as
 * {@code CreateBackup} writes one: expiry first, manifest last (its commit point); a copy that
 * fails deletes what it wrote.
 *
 * <p>Bounds: a copy must be done within {@code budget} (a quarter of the file sweep's grace:
 * its copied files are unnamed until the manifest is written, and the sweep takes nothing
 * unnamed for less than a grace), checked before each 1 MiB read and before the manifest is
 * written; at most {@value #MAX_COPIES} copies from other roots run at once on a node (each holds
 * a blocking-I/O thread and a 1 MiB buffer), more are RESOURCE_EXHAUSTED. Thread-safe: the
 * semaphore is the only state.
 */
final class BackupCopy {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(BackupCopy.class);
  private static final Pattern CLUSTER = Pattern.compile("((projects/[^/]+)/instances/([^/]+))/clusters/([^/]+)");
  private static final Pattern SOURCE = Pattern.compile(
      "(projects/[^/]+)/instances/([^/]+)/clusters/([^/]+)/backups/([^/]+)");
  /** Copies from other storage roots that may run at once on a node. */
  static final int MAX_COPIES = 4;

  private final BackupService backups;
  private final Storage storage;
  private final CopySources sources;
  private final Executor blockingIo;
  private final LongSupplier clockMicros;
  private final LongSupplier nanoTime;
  private final Duration budget;
  private final Semaphore copying = new Semaphore(MAX_COPIES);

  BackupCopy(BackupService backups, Storage storage, CopySources sources, Executor blockingIo,
      LongSupplier clockMicros, LongSupplier nanoTime, Duration budget) {
    this.backups = backups;
    this.storage = storage;
    this.sources = sources;
    this.blockingIo = blockingIo;
    this.clockMicros = clockMicros;
    this.nanoTime = nanoTime;
    this.budget = budget;
  }

  /** Where the source is: this instance's root, or another's ({@code instance} names it in copy-sources). */
  private record Source(String full, String project, String instance, String cluster, String id, boolean here) {}

  CompletionStage<Operation> copy(CopyBackupRequest in) {
    return GrpcErrors.unary(() -> {
      Matcher parent = CLUSTER.matcher(in.getParent());
      if (!parent.matches()) {
        throw GrpcErrors.invalid("parent", "'" + in.getParent() + "' is not a cluster name of the form"
            + " projects/{project}/instances/{instance}/clusters/{cluster}");
      }
      BackupService.Name name = backups.newName(parent, in.getBackupId());
      Source source = source(in.getSourceBackup(), parent.group(1));
      long now = clockMicros.getAsLong();
      long started = nanoTime.getAsLong();
      if (source.here()) {
        return BackupService.onIo(blockingIo, () -> {
          BackupManifest from = backups.manifest(new BackupService.Name(parent.group(1), source.cluster(),
              source.id()));
          long expire = BackupService.checkExpiry("expire_time", in.getExpireTime(), now, from.startMicros());
          BackupManifest m = renamed(from, name.id(), from.tablets(), source.full());
          return commit(name, source, m, expire, started, List.of());
        });
      }
      if (!copying.tryAcquire()) {
        throw GrpcErrors.status(ErrorCode.RESOURCE_EXHAUSTED, "this node is copying " + MAX_COPIES
            + " backups from other instances already; try again later", null);
      }
      CompletionStage<Operation> done = BackupService.onIo(blockingIo, () -> {
        Storage from = sources.open(source.instance());
        try {
          return copyFrom(from, source, name, in, now, started);
        } finally {
          CopySources.close(from);
        }
      });
      return done.whenComplete((op, err) -> copying.release());
    });
  }

  /** The source backup's name, checked: of this instance, or of an instance copy-sources names. */
  private Source source(String full, String parentInstance) {
    Matcher m = SOURCE.matcher(full);
    if (!m.matches()) {
      throw GrpcErrors.invalid("source_backup", "'" + full + "' is not a backup name of the form"
          + " projects/{project}/instances/{instance}/clusters/{cluster}/backups/{backup}");
    }
    if (!BackupService.validId(m.group(4))) {
      throw GrpcErrors.invalid("source_backup", "backup id '" + m.group(4) + "' must match"
          + " [_a-zA-Z0-9][-_.a-zA-Z0-9]* and be at most 50 characters");
    }
    String instance = m.group(1) + "/instances/" + m.group(2);
    if (instance.equals(parentInstance)) {
      backups.name("source_backup", full); // the cluster must be this instance's one
      return new Source(full, m.group(1), m.group(2), m.group(3), m.group(4), true);
    }
    if (!sources.has(m.group(2))) {
      throw GrpcErrors.status(ErrorCode.NOT_FOUND, "source_backup: instance '" + m.group(2) + "' is neither this"
          + " instance nor one this node may copy from (" + CopySources.KEY + ": " + sources.ids() + ")",
          "source_backup");
    }
    return new Source(full, m.group(1), m.group(2), m.group(3), m.group(4), false);
  }

  /** Copies {@code source}'s files from {@code from} into this root, checked, then commits the new backup. */
  private Operation copyFrom(Storage from, Source source, BackupService.Name name, CopyBackupRequest in, long now,
      long started) throws IOException {
    BackupManifest src;
    try {
      src = BackupManifestCodec.read(from, source.id());
    } catch (java.nio.file.NoSuchFileException e) {
      throw GrpcErrors.notFound("source_backup: backup " + source.full() + " not found");
    }
    long expire = BackupService.checkExpiry("expire_time", in.getExpireTime(), now, src.startMicros());
    backups.checkFree(name);
    long deadline = started + budget.toNanos();
    String folder = Storage.path("tables", src.sourceTable(), "copy-" + HexFormat.of().toHexDigits(
        UUID.randomUUID().getMostSignificantBits()) + HexFormat.of().toHexDigits(UUID.randomUUID()
        .getLeastSignificantBits()));
    Map<String, String> renamed = new LinkedHashMap<>();
    List<String> made = new ArrayList<>();
    boolean committed = false;
    try {
      for (BackupManifest.TabletFiles t : src.tablets()) {
        for (List<BackupManifest.FileEntry> files : t.files().values()) {
          for (BackupManifest.FileEntry f : files) {
            if (renamed.containsKey(f.path())) {
              continue; // a file shared by two tablets (after a split) is copied once
            }
            String dest = Storage.path(folder, String.format("%06d.sst", renamed.size() + 1));
            renamed.put(f.path(), dest);
            made.add(dest);
            BackupFileCopy.copy(from, f.path(), f.bytes(), storage, dest, nanoTime, deadline);
          }
        }
      }
      List<BackupManifest.TabletFiles> tablets = new ArrayList<>();
      for (BackupManifest.TabletFiles t : src.tablets()) {
        Map<String, List<BackupManifest.FileEntry>> files = new LinkedHashMap<>();
        t.files().forEach((g, l) -> files.put(g, l.stream().map(f -> new BackupManifest.FileEntry(
            renamed.get(f.path()), f.bytes())).toList()));
        tablets.add(new BackupManifest.TabletFiles(t.startRow(), t.endRow(), files, t.lastSequence(),
            t.maxServerTime()));
      }
      storage.syncDirectory(folder);
      Operation op = commit(name, source, renamed(src, name.id(), tablets, source.full()), expire, started, made);
      committed = true;
      return op;
    } catch (java.nio.file.NoSuchFileException e) {
      throw GrpcErrors.status(ErrorCode.DATA_LOSS, "source_backup: backup " + source.full() + " is damaged or"
          + " being deleted: " + e.getFile() + " is missing", "source_backup");
    } catch (BackupFileCopy.CopyFailedException e) {
      throw switch (e.problem()) {
        case SOURCE_LENGTH, CHECKSUM -> GrpcErrors.status(ErrorCode.DATA_LOSS, "copy of " + source.full()
            + " to " + name.full() + " failed and was undone: " + e.getMessage(), null);
        case DEADLINE -> deadlinePassed(name);
      };
    } finally {
      if (!committed) {
        undo(made, folder);
      }
    }
  }

  /**
   * Writes backup {@code name} as {@code m}: its expiry, then (within the deadline) its
   * manifest, then checks every file it names is there; undoes the backup otherwise.
   */
  private Operation commit(BackupService.Name name, Source source, BackupManifest m, long expire, long started,
      List<String> copied) throws IOException {
    backups.checkFree(name);
    storage.createDirectories(BackupManifestCodec.folder(name.id()));
    if (!BackupExpiry.write(storage, name.id(), 1, new BackupExpiry(expire, 0))) {
      throw GrpcErrors.status(ErrorCode.ALREADY_EXISTS, "backup " + name.full() + " already exists", null);
    }
    try {
      if (nanoTime.getAsLong() - (started + budget.toNanos()) > 0) {
        throw deadlinePassed(name);
      }
      BackupManifestCodec.write(storage, m);
    } catch (java.nio.file.FileAlreadyExistsException e) {
      throw GrpcErrors.status(ErrorCode.ALREADY_EXISTS, "backup " + name.full() + " already exists", null);
    } catch (RuntimeException | IOException e) {
      BackupService.delete(storage, name.id());
      throw e;
    }
    for (String p : m.paths()) {
      if (!storage.exists(p)) {
        BackupService.delete(storage, name.id());
        throw GrpcErrors.status(ErrorCode.ABORTED, "backup " + name.full() + ": " + p + " was gone before the copy"
            + " named it (its source was deleted meanwhile?)", null);
      }
    }
    Backup b = backups.toProto(name, m, new BackupExpiry(expire, 0)).toBuilder().setSourceBackup(source.full())
        .build();
    return Operation.newBuilder()
        .setName(name.full() + "/operations/copy")
        .setMetadata(Any.pack(CopyBackupMetadata.newBuilder().setName(name.full())
            .setSourceBackupInfo(BackupInfo.newBuilder().setBackup(source.full())
                .setSourceTable(b.getSourceTable()).setStartTime(b.getStartTime()).setEndTime(b.getEndTime()))
            .setProgress(OperationProgress.newBuilder().setProgressPercent(100)
                .setEndTime(BackupService.timestamp(clockMicros.getAsLong())))
            .build()))
        .setDone(true)
        .setResponse(Any.pack(b))
        .build();
  }

  /**
   * {@code m} as backup {@code id}, naming {@code tablets}, copied from {@code source} (its full
   * name); a copy keeps its source's moment and type.
   */
  private static BackupManifest renamed(BackupManifest m, String id, List<BackupManifest.TabletFiles> tablets,
      String source) {
    return new BackupManifest(id, m.sourceTable(), m.startMicros(), m.snapshotMicros(), m.hot(), m.schema(),
        tablets, source);
  }

  private RuntimeException deadlinePassed(BackupService.Name name) {
    return GrpcErrors.status(ErrorCode.UNAVAILABLE, "copy to " + name.full() + " gave up and was undone:"
        + " a copy must be done within " + budget.toSeconds() + " s (a quarter of"
        + " tabula.master.sweep-files-grace)", null);
  }

  /** Deletes the files a failed copy made; what cannot be deleted now the sweep collects (nothing names it). */
  private void undo(List<String> made, String folder) {
    try {
      for (String p : made) {
        if (storage.exists(p)) {
          storage.delete(p);
        }
      }
      if (storage.exists(folder) && storage.list(folder).isEmpty()) {
        storage.delete(folder);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("a failed backup copy left files in {} (the file sweep collects them: nothing names them)", folder,
          e);
    }
  }
}
