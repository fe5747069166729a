package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.Backup;
import com.google.bigtable.admin.v2.CreateBackupMetadata;
import com.google.bigtable.admin.v2.CreateBackupRequest;
import com.google.bigtable.admin.v2.DeleteBackupRequest;
import com.google.bigtable.admin.v2.GetBackupRequest;
import com.google.bigtable.admin.v2.ListBackupsRequest;
import com.google.bigtable.admin.v2.ListBackupsResponse;
import com.google.bigtable.admin.v2.UpdateBackupRequest;
import com.google.longrunning.Operation;
import com.google.protobuf.Any;
import com.google.protobuf.Empty;
import com.google.protobuf.Timestamp;
import com.google.bigtable.admin.v2.BackupInfo;
import com.google.bigtable.admin.v2.OperationProgress;
import com.google.bigtable.admin.v2.RestoreSourceType;
import com.google.bigtable.admin.v2.RestoreTableMetadata;
import com.google.bigtable.admin.v2.RestoreTableRequest;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TabletIds;
import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.tablet.TabletBackups;
import java.util.Map;
import java.util.TreeMap;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.cluster.routing.Router;
import io.tabula.persistence.backup.BackupExpiry;
import io.tabula.persistence.backup.BackupManifest;
import io.tabula.persistence.backup.BackupManifestCodec;
import io.tabula.persistence.storage.Storage;
import io.tabula.protocol.errors.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cloud Bigtable's backups over the storage root (docs/backups.md): a backup is its manifest
 * and expiry files under {@code backups/<id>/}, which every node reads, so any node answers
 * for any backup. {@code CreateBackup} walks the table's rows tablet by tablet, each tablet
 * flushing, disowning and listing its SSTables ({@link TabletActor.ListForBackup}), then
 * writes the manifest; the operation it answers is already done. Backups live under the
 * instance's one cluster ({@code tabula.instance.cluster-id}). Storage I/O runs on the
 * blocking-I/O executor. Stateless apart from its settings; thread-safe.
 */
final class BackupService {
  private static final Pattern CLUSTER = Pattern.compile("(projects/[^/]+/instances/[^/]+)/clusters/([^/]+)");
  private static final Pattern BACKUP = Pattern.compile(
      "((projects/[^/]+/instances/[^/]+)/clusters/([^/]+))/backups/([^/]+)");
  private static final Pattern BACKUP_ID = Pattern.compile("[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,49}");
  /** Cloud Bigtable's bounds on a backup's expiry: at least 6 hours from now, at most 90 days from its start. */
  static final Duration MIN_EXPIRY = Duration.ofHours(6);
  static final Duration MAX_EXPIRY = Duration.ofDays(90);
  /** A HOT backup becomes STANDARD no sooner than this after it is made. */
  static final Duration MIN_HOT = Duration.ofHours(24);

  private final Router router;
  private final Storage storage;
  private final String clusterId;
  private final Executor blockingIo;
  private final LongSupplier clockMicros;
  /** A backup whose listing takes longer than this is given up (a quarter of the file sweep's grace). */
  private final Duration listingBudget;
  /** What listings read of each backup, kept between them. */
  private final BackupCatalog catalog;

  /** CopyBackup's work. */
  private final BackupCopy copies;
  /** Backups' IAM policies. */
  private final BackupPolicies policies;

  BackupService(Router router, Storage storage, String clusterId, Executor blockingIo, LongSupplier clockMicros,
      Duration listingBudget, CopySources copySources) {
    this.router = router;
    this.storage = storage;
    this.clusterId = clusterId;
    this.blockingIo = blockingIo;
    this.clockMicros = clockMicros;
    this.listingBudget = listingBudget;
    this.catalog = new BackupCatalog(storage);
    this.copies = new BackupCopy(this, storage, copySources, blockingIo, clockMicros, System::nanoTime, listingBudget);
    this.policies = new BackupPolicies(this, storage, blockingIo);
  }

  /** Backups' IAM policies. */
  BackupPolicies policies() {
    return policies;
  }

  /** CopyBackup: {@link BackupCopy}. */
  CompletionStage<Operation> copyBackup(com.google.bigtable.admin.v2.CopyBackupRequest in) {
    return copies.copy(in);
  }

  /** The instance's one cluster, which backups live under. */
  String clusterId() {
    return clusterId;
  }

  /** A backup's name, taken apart. */
  record Name(String instance, String cluster, String id) {
    String full() {
      return instance + "/clusters/" + cluster + "/backups/" + id;
    }
  }

  CompletionStage<Operation> createBackup(CreateBackupRequest in) {
    return GrpcErrors.unary(() -> {
      Matcher parent = CLUSTER.matcher(in.getParent());
      if (!parent.matches()) {
        throw GrpcErrors.invalid("parent", "'" + in.getParent() + "' is not a cluster name of the form"
            + " projects/{project}/instances/{instance}/clusters/{cluster}");
      }
      Name name = newName(parent, in.getBackupId());
      String id = name.id();
      String table = Names.tableId("backup.source_table", in.getBackup().getSourceTable());
      long now = clockMicros.getAsLong();
      long expire = checkExpiry("backup.expire_time", in.getBackup().getExpireTime(), now, now);
      boolean hot = switch (in.getBackup().getBackupType()) {
        case BACKUP_TYPE_UNSPECIFIED, STANDARD -> false;
        case HOT -> true;
        default -> throw GrpcErrors.invalid("backup.backup_type", "is not STANDARD or HOT");
      };
      long hotUntil = 0;
      if (in.getBackup().hasHotToStandardTime()) {
        if (!hot) {
          throw GrpcErrors.invalid("backup.hot_to_standard_time", "is only for a HOT backup");
        }
        hotUntil = micros("backup.hot_to_standard_time", in.getBackup().getHotToStandardTime());
        if (hotUntil < now + MIN_HOT.toNanos() / 1000 || hotUntil > expire) {
          throw GrpcErrors.invalid("backup.hot_to_standard_time", "must be at least 24 hours from now and no later"
              + " than the backup's expire_time");
        }
      }
      long hotToStandard = hotUntil;
      return onIo(() -> {
        checkFree(name);
        return null;
      }).thenCompose(x -> router.table(table)).thenCompose(t -> walk(t, name, now)
          .thenCompose(listed -> router.table(table).thenApply(again -> {
            if (!again.schema().families().equals(listed.schema.families())
                || !again.schema().groupNames().equals(listed.schema.groupNames())) {
              throw GrpcErrors.status(ErrorCode.ABORTED, "backup " + name.full() + ": the table's families or"
                  + " locality groups changed while it was listed; try again", null);
            }
            return listed;
          })))
          .thenCompose(listed -> onIo(() -> {
            if (System.nanoTime() > listed.deadline) {
              throw GrpcErrors.status(ErrorCode.UNAVAILABLE, "backup " + name.full() + " gave up: listing the"
                  + " table's tablets took longer than " + listingBudget.toSeconds() + " s", null);
            }
            BackupManifest m = new BackupManifest(id, table, now, clockMicros.getAsLong(), hot, listed.schema,
                listed.tablets);
            // The expiry first: the manifest is the backup's commit point, and a backup always has an expiry.
            storage.createDirectories(BackupManifestCodec.folder(id));
            boolean first = BackupExpiry.write(storage, id, 1, new BackupExpiry(expire, hotToStandard));
            try {
              if (!first) {
                throw new java.nio.file.FileAlreadyExistsException(BackupManifestCodec.path(id));
              }
              BackupManifestCodec.write(storage, m);
            } catch (java.nio.file.FileAlreadyExistsException e) {
              throw GrpcErrors.status(ErrorCode.ALREADY_EXISTS, "backup " + name.full() + " already exists", null);
            }
            // Checked at run time: every file listed is still there now that the manifest names it.
            for (String p : m.paths()) {
              if (!storage.exists(p)) {
                delete(storage, id);
                throw GrpcErrors.status(ErrorCode.ABORTED, "backup " + name.full() + ": " + p + " was gone before"
                    + " the backup named it; try again", null);
              }
            }
            Backup b = toProto(name, m, new BackupExpiry(expire, hotToStandard));
            return Operation.newBuilder()
                .setName(name.full() + "/operations/create")
                .setMetadata(Any.pack(CreateBackupMetadata.newBuilder().setName(name.full())
                    .setSourceTable(b.getSourceTable()).setStartTime(b.getStartTime()).setEndTime(b.getEndTime())
                    .build()))
                .setDone(true)
                .setResponse(Any.pack(b))
                .build();
          }));
    });
  }

  /**
   * A table's schema and its tablets' listings, in row order; {@code deadline} (System.nanoTime)
   * is when the manifest must be written by.
   */
  private record Listed(io.tabula.persistence.schema.TableSchema schema, List<BackupManifest.TabletFiles> tablets,
      long deadline) {}

  /**
   * Asks the tablet holding each row in turn, from the first, to flush, disown and list its
   * files, going on from the end row of the one that answered until the end of the table: a
   * split or merge meanwhile is followed by row, so every row is listed once.
   */
  private CompletionStage<Listed> walk(TableInfo t, Name name, long startedMicros) {
    List<BackupManifest.TabletFiles> out = new ArrayList<>();
    long deadline = System.nanoTime() + listingBudget.toNanos();
    return step(t.name(), new byte[0], out, deadline, name).thenApply(x -> new Listed(t.schema(), out, deadline));
  }

  private CompletionStage<Void> step(String table, byte[] row, List<BackupManifest.TabletFiles> out, long deadline,
      Name name) {
    if (System.nanoTime() > deadline) {
      return CompletableFuture.failedFuture(GrpcErrors.status(ErrorCode.UNAVAILABLE, "backup " + name.full()
          + " gave up: listing the table's tablets took longer than " + listingBudget.toSeconds() + " s", null));
    }
    return router.<BackupManifest.TabletFiles>ask(table, row, (info, reply) -> new TabletActor.ListForBackup(reply))
        .thenCompose(answer -> {
          // The tablet holding the row may have begun before it (a merge since the earlier part was listed): the
          // rows before were listed already, so this listing covers the rows from this one on.
          BackupManifest.TabletFiles files = answer.value().from(row);
          if (files.endRow().length != 0
              && io.tabula.persistence.encoding.ByteArrays.compare(files.endRow(), row) <= 0) {
            return CompletableFuture.failedFuture(GrpcErrors.status(ErrorCode.ABORTED, "backup " + name.full()
                + ": a tablet answered for rows that do not hold the row asked; try again", null));
          }
          out.add(files);
          return files.endRow().length == 0 ? CompletableFuture.completedFuture(null)
              : step(table, files.endRow(), out, deadline, name);
        });
  }

  /**
   * A new table from a backup: its tablets, with fresh ids, start from the backup's listing
   * (their first manifests, written here, name the backup's files, unowned), then the master
   * records the table. It serves at once; its own compactions write new files in its own
   * folders. The operation answered is already done.
   */
  CompletionStage<Operation> restoreTable(RestoreTableRequest in, AdminService admin) {
    return GrpcErrors.unary(() -> {
      String instance = Names.instance("parent", in.getParent());
      String table = Names.checkTableId("table_id", in.getTableId());
      if (in.getSourceCase() != RestoreTableRequest.SourceCase.BACKUP) {
        throw GrpcErrors.invalid("backup", "is required: a table is restored from a backup");
      }
      Name name = name("backup", in.getBackup());
      Timestamp started = timestamp(clockMicros.getAsLong());
      return onIo(() -> {
        if (router.directory().table(table) != null) {
          throw GrpcErrors.status(ErrorCode.ALREADY_EXISTS, "table " + table + " already exists", null);
        }
        BackupManifest m = manifest(name);
        for (String p : m.paths()) {
          if (!storage.exists(p)) {
            throw GrpcErrors.status(ErrorCode.DATA_LOSS, "backup " + name.full() + " is damaged: its file " + p
                + " is missing", null);
          }
        }
        List<TabletInfo> tablets = new ArrayList<>();
        for (BackupManifest.TabletFiles t : m.tablets()) {
          String id = TabletIds.fresh(table);
          Map<String, List<String>> files = new TreeMap<>();
          t.files().forEach((g, l) -> files.put(g, l.stream().map(BackupManifest.FileEntry::path).toList()));
          TabletBackups.createRestored(storage, table, id, t.startRow(), t.endRow(), files, t.lastSequence(),
              Math.max(m.snapshotMicros(), t.maxServerTime()));
          tablets.add(new TabletInfo(table, id, t.startRow(), t.endRow(), files, 0));
        }
        return new Restoring(m, tablets);
      }).thenCompose(r -> admin.seen(admin.<TableInfo>askMaster(reply -> new Master.CreateRestoredTable(
          tableOf(table, r.manifest().schema()), r.tablets(), reply))).thenApply(t -> {
            Backup b = toProto(name, r.manifest(), new BackupExpiry(0, 0));
            String tableName = Names.tableName(instance, table);
            return Operation.newBuilder()
                .setName(tableName + "/operations/restore")
                .setMetadata(Any.pack(RestoreTableMetadata.newBuilder().setName(tableName)
                    .setSourceType(RestoreSourceType.BACKUP)
                    .setBackupInfo(BackupInfo.newBuilder().setBackup(name.full()).setSourceTable(b.getSourceTable())
                        .setStartTime(b.getStartTime()).setEndTime(b.getEndTime()))
                    .setProgress(OperationProgress.newBuilder().setProgressPercent(100).setStartTime(started)
                        .setEndTime(timestamp(clockMicros.getAsLong())))
                    .build()))
                .setDone(true)
                .setResponse(Any.pack(AdminService.toProto(instance, t, true)))
                .build();
          }));
    });
  }

  /** A restore's backup and the tablets made for it. */
  private record Restoring(BackupManifest manifest, List<TabletInfo> tablets) {}

  /** Table {@code name} with {@code schema}'s families and locality groups. */
  private static TableInfo tableOf(String name, io.tabula.persistence.schema.TableSchema schema) {
    Map<String, io.tabula.persistence.schema.GcPolicy> families = new TreeMap<>();
    Map<String, String> familyGroups = new TreeMap<>();
    Map<String, io.tabula.persistence.schema.Aggregator> aggregates = new TreeMap<>();
    schema.families().forEach((f, cf) -> {
      families.put(f, cf.gcPolicy());
      if (cf.aggregator() != null) {
        aggregates.put(f, cf.aggregator());
      }
      if (!cf.localityGroup().equals(io.tabula.persistence.schema.LocalityGroup.DEFAULT_NAME)) {
        familyGroups.put(f, cf.localityGroup());
      }
    });
    Map<String, io.tabula.persistence.schema.LocalityGroup> groups = new TreeMap<>();
    schema.groupNames().forEach(g -> groups.put(g, schema.group(g)));
    return new TableInfo(name, families, 0, groups, familyGroups, io.tabula.actors.master.TableAccess.NONE,
        io.tabula.actors.master.TableOptions.NONE, aggregates);
  }

  CompletionStage<Backup> getBackup(GetBackupRequest in) {
    return GrpcErrors.unary(() -> {
      Name name = name("name", in.getName());
      return onIo(() -> read(name));
    });
  }

  CompletionStage<ListBackupsResponse> listBackups(ListBackupsRequest in) {
    return GrpcErrors.unary(() -> {
      Matcher parent = CLUSTER.matcher(in.getParent());
      if (!parent.matches()) {
        throw GrpcErrors.invalid("parent", "'" + in.getParent() + "' is not a cluster name of the form"
            + " projects/{project}/instances/{instance}/clusters/{cluster} (or clusters/-)");
      }
      if (!parent.group(2).equals("-")) {
        checkCluster(parent.group(2));
      }
      BackupQuery query = BackupQuery.parse(in.getFilter(), in.getOrderBy());
      String instance = parent.group(1);
      if (in.getPageSize() < 0) {
        throw GrpcErrors.invalid("page_size", "must not be negative, was " + in.getPageSize() + " (0: the server's"
            + " maximum, " + BackupQuery.MAX_PAGE_SIZE + ")");
      }
      return onIo(() -> {
        List<Backup> all = new ArrayList<>();
        for (BackupCatalog.Entry e : catalog.all()) {
          all.add(toProto(new Name(instance, clusterId, e.id()), e.summary(), e.expiry()));
        }
        return query.page(all, in.getPageSize(), in.getPageToken());
      });
    });
  }

  CompletionStage<Backup> updateBackup(UpdateBackupRequest in) {
    return GrpcErrors.unary(() -> {
      Name name = name("backup.name", in.getBackup().getName());
      if (in.getUpdateMask().getPathsCount() == 0) {
        throw GrpcErrors.invalid("update_mask", "must name the fields to change: expire_time");
      }
      boolean expiry = false;
      boolean hot = false;
      for (int i = 0; i < in.getUpdateMask().getPathsCount(); i++) {
        switch (in.getUpdateMask().getPaths(i)) {
          case "expire_time" -> expiry = true;
          case "hot_to_standard_time" -> hot = true;
          default -> throw GrpcErrors.invalid("update_mask.paths[" + i + "]", "'" + in.getUpdateMask().getPaths(i)
              + "' is not a field UpdateBackup changes (expire_time, hot_to_standard_time)");
        }
      }
      boolean changeExpiry = expiry;
      boolean changeHot = hot;
      return onIo(() -> {
        for (int attempt = 0; ; attempt++) {
          BackupManifest m = manifest(name);
          BackupExpiry.Versioned now = BackupExpiry.read(storage, name.id());
          long expire = changeExpiry ? checkExpiry("backup.expire_time", in.getBackup().getExpireTime(),
              clockMicros.getAsLong(), m.startMicros()) : now.expiry().expireMicros();
          long hotUntil = now.expiry().hotToStandardMicros();
          if (changeHot) {
            if (!m.hot()) {
              throw GrpcErrors.invalid("backup.hot_to_standard_time", "is only for a HOT backup");
            }
            hotUntil = in.getBackup().hasHotToStandardTime()
                ? micros("backup.hot_to_standard_time", in.getBackup().getHotToStandardTime()) : 0;
          }
          if (hotUntil != 0 && (changeHot || changeExpiry) && (hotUntil > expire || (changeHot
              && hotUntil < clockMicros.getAsLong() + MIN_HOT.toNanos() / 1000))) {
            throw GrpcErrors.invalid("backup.hot_to_standard_time", "must be at least 24 hours from now and no later"
                + " than the backup's expire_time");
          }
          BackupExpiry next = new BackupExpiry(expire, hotUntil);
          if (BackupExpiry.write(storage, name.id(), now.version() + 1, next)) {
            if (!storage.exists(BackupManifestCodec.path(name.id()))) {
              delete(storage, name.id()); // deleted meanwhile: the change must not leave a folder behind
              throw GrpcErrors.notFound("backup " + name.full() + " not found (deleted meanwhile)");
            }
            return toProto(name, m, next);
          }
          if (attempt == 3) {
            throw GrpcErrors.status(ErrorCode.ABORTED, "backup " + name.full() + " was changed by others meanwhile;"
                + " try again", null);
          }
        }
      });
    });
  }

  CompletionStage<Empty> deleteBackup(DeleteBackupRequest in) {
    return GrpcErrors.unary(() -> {
      Name name = name("name", in.getName());
      return onIo(() -> {
        if (!storage.exists(BackupManifestCodec.path(name.id()))) {
          throw GrpcErrors.notFound("backup " + name.full() + " not found");
        }
        delete(storage, name.id());
        return Empty.getDefaultInstance();
      });
    });
  }

  /**
   * Deletes backup {@code id}: its manifest first (from then on it names no file, and the
   * sweep may collect what nothing else names), then the rest of its folder.
   */
  static void delete(Storage storage, String id) throws IOException {
    BackupManifestCodec.deleteContents(storage, id);
    storage.delete(BackupManifestCodec.folder(id));
  }

  /** Backup {@code name} as the API shows it; NOT_FOUND if it has no manifest. */
  Backup read(Name name) throws IOException {
    BackupManifest m = manifest(name);
    try {
      return toProto(name, m, BackupExpiry.read(storage, name.id()).expiry());
    } catch (java.nio.file.NoSuchFileException e) {
      throw GrpcErrors.notFound("backup " + name.full() + " not found (deleted meanwhile)");
    }
  }

  BackupManifest manifest(Name name) throws IOException {
    try {
      return BackupManifestCodec.read(storage, name.id());
    } catch (java.nio.file.NoSuchFileException e) {
      throw GrpcErrors.notFound("backup " + name.full() + " not found");
    }
  }

  Backup toProto(Name name, BackupManifest m, BackupExpiry e) {
    return toProto(name, BackupCatalog.Summary.of(m), e);
  }

  Backup toProto(Name name, BackupCatalog.Summary m, BackupExpiry e) {
    Backup.Builder b = Backup.newBuilder()
        .setName(name.full())
        .setSourceTable(Names.tableName(name.instance(), m.sourceTable()))
        .setStartTime(timestamp(m.startMicros()))
        .setEndTime(timestamp(m.snapshotMicros()))
        .setExpireTime(timestamp(e.expireMicros()))
        .setSizeBytes(m.bytes())
        .setState(Backup.State.READY)
        .setBackupType(m.hot() ? Backup.BackupType.HOT : Backup.BackupType.STANDARD);
    if (e.hotToStandardMicros() > 0) {
      b.setHotToStandardTime(timestamp(e.hotToStandardMicros()));
    }
    if (!m.sourceBackup().isEmpty()) {
      b.setSourceBackup(m.sourceBackup()); // a copy: the backup it was copied from
    }
    return b.build();
  }

  /**
   * The name of a backup to make, {@code id} under the cluster {@code parent} matched: the
   * cluster must be the instance's one, the id valid (INVALID_ARGUMENT naming backup_id).
   */
  Name newName(Matcher parent, String id) {
    checkCluster(parent.group(parent.groupCount()));
    if (!validId(id)) {
      throw GrpcErrors.invalid("backup_id", "'" + id + "' must match [_a-zA-Z0-9][-_.a-zA-Z0-9]* and be at most"
          + " 50 characters");
    }
    return new Name(parent.group(1), parent.group(parent.groupCount()), id);
  }

  static boolean validId(String id) {
    return BACKUP_ID.matcher(id).matches();
  }

  /**
   * Refuses to make backup {@code name} where one exists (ALREADY_EXISTS) or is being made or
   * deleted (FAILED_PRECONDITION: its folder holds files but no manifest). Blocks on storage.
   */
  void checkFree(Name name) throws IOException {
    if (storage.exists(BackupManifestCodec.path(name.id()))) {
      throw GrpcErrors.status(ErrorCode.ALREADY_EXISTS, "backup " + name.full() + " already exists", null);
    }
    if (!storage.list(BackupManifestCodec.folder(name.id())).isEmpty()) {
      throw GrpcErrors.status(ErrorCode.FAILED_PRECONDITION, "backup " + name.full() + " is being made or"
          + " deleted; try again later or choose another id", null);
    }
  }

  /** The backup named in {@code field}; its cluster must be the instance's one. */
  Name name(String field, String full) {
    Matcher m = BACKUP.matcher(full);
    if (!m.matches()) {
      throw GrpcErrors.invalid(field, "'" + full + "' is not a backup name of the form"
          + " projects/{project}/instances/{instance}/clusters/{cluster}/backups/{backup}");
    }
    checkCluster(m.group(3));
    if (!BACKUP_ID.matcher(m.group(4)).matches()) {
      throw GrpcErrors.invalid(field, "backup id '" + m.group(4) + "' must match [_a-zA-Z0-9][-_.a-zA-Z0-9]* and be"
          + " at most 50 characters");
    }
    return new Name(m.group(2), m.group(3), m.group(4));
  }

  private void checkCluster(String cluster) {
    if (!cluster.equals(clusterId)) {
      throw GrpcErrors.notFound("cluster '" + cluster + "' not found: this instance's one cluster is '" + clusterId
          + "'");
    }
  }

  /** The expiry {@code t} gives, checked: at least 6 hours after {@code now}, at most 90 days after {@code start}. */
  static long checkExpiry(String field, Timestamp t, long nowMicros, long startMicros) {
    if (t.getSeconds() == 0 && t.getNanos() == 0) {
      throw GrpcErrors.invalid(field, "is required");
    }
    long expire = micros(field, t);
    // A minute's slack: a client asking for exactly 6 hours computes them on its own clock, before the call.
    if (expire < nowMicros + MIN_EXPIRY.minusMinutes(1).toNanos() / 1000) {
      throw GrpcErrors.invalid(field, "must be at least 6 hours from now, was "
          + Instant.ofEpochSecond(t.getSeconds(), t.getNanos()));
    }
    if (expire > startMicros + MAX_EXPIRY.toNanos() / 1000) {
      throw GrpcErrors.invalid(field, "must be at most 90 days after the backup began, was "
          + Instant.ofEpochSecond(t.getSeconds(), t.getNanos()));
    }
    return expire;
  }

  /** Protobuf's valid timestamps: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. */
  private static final long MIN_SECONDS = -62_135_596_800L;
  private static final long MAX_SECONDS = 253_402_300_799L;

  /** {@code t} in µs since the epoch; INVALID_ARGUMENT naming {@code field} for a timestamp protobuf does not allow. */
  static long micros(String field, Timestamp t) {
    if (t.getSeconds() < MIN_SECONDS || t.getSeconds() > MAX_SECONDS || t.getNanos() < 0
        || t.getNanos() > 999_999_999) {
      throw GrpcErrors.invalid(field, "is not a valid timestamp (" + t.getSeconds() + " s, " + t.getNanos() + " ns)");
    }
    return t.getSeconds() * 1_000_000L + t.getNanos() / 1000;
  }

  static Timestamp timestamp(long micros) {
    return Timestamp.newBuilder().setSeconds(Math.floorDiv(micros, 1_000_000L))
        .setNanos((int) Math.floorMod(micros, 1_000_000L) * 1000).build();
  }

  /** I/O that may throw, run on the blocking-I/O executor. */
  @FunctionalInterface
  interface IoWork<T> {
    T run() throws IOException;
  }

  private <T> CompletionStage<T> onIo(IoWork<T> work) {
    return onIo(blockingIo, work);
  }

  /** {@code work} on {@code executor}; an {@link IOException} fails the stage (unchecked). */
  static <T> CompletionStage<T> onIo(Executor executor, IoWork<T> work) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return work.run();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, executor);
  }
}
