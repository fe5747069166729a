package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.AuthorizedView;
import com.google.bigtable.admin.v2.Backup;
import com.google.bigtable.admin.v2.BigtableTableAdmin;
import com.google.bigtable.admin.v2.ChangeStreamConfig;
import com.google.bigtable.admin.v2.CheckConsistencyRequest;
import com.google.bigtable.admin.v2.CheckConsistencyResponse;
import com.google.bigtable.admin.v2.ColumnFamily;
import com.google.bigtable.admin.v2.CopyBackupRequest;
import com.google.bigtable.admin.v2.CreateAuthorizedViewRequest;
import com.google.bigtable.admin.v2.CreateBackupRequest;
import com.google.bigtable.admin.v2.CreateSchemaBundleRequest;
import com.google.bigtable.admin.v2.CreateTableFromSnapshotRequest;
import com.google.bigtable.admin.v2.CreateTableRequest;
import com.google.bigtable.admin.v2.DeleteAuthorizedViewRequest;
import com.google.bigtable.admin.v2.DeleteBackupRequest;
import com.google.bigtable.admin.v2.DeleteSchemaBundleRequest;
import com.google.bigtable.admin.v2.DeleteSnapshotRequest;
import com.google.bigtable.admin.v2.DeleteTableRequest;
import com.google.bigtable.admin.v2.DropRowRangeRequest;
import com.google.bigtable.admin.v2.GenerateConsistencyTokenRequest;
import com.google.bigtable.admin.v2.GenerateConsistencyTokenResponse;
import com.google.bigtable.admin.v2.GetAuthorizedViewRequest;
import com.google.bigtable.admin.v2.GetBackupRequest;
import com.google.bigtable.admin.v2.GetSchemaBundleRequest;
import com.google.bigtable.admin.v2.GetSnapshotRequest;
import com.google.bigtable.admin.v2.GetTableRequest;
import com.google.bigtable.admin.v2.ListAuthorizedViewsRequest;
import com.google.bigtable.admin.v2.ListAuthorizedViewsResponse;
import com.google.bigtable.admin.v2.ListBackupsRequest;
import com.google.bigtable.admin.v2.ListBackupsResponse;
import com.google.bigtable.admin.v2.ListSchemaBundlesRequest;
import com.google.bigtable.admin.v2.ListSchemaBundlesResponse;
import com.google.bigtable.admin.v2.ListSnapshotsRequest;
import com.google.bigtable.admin.v2.ListSnapshotsResponse;
import com.google.bigtable.admin.v2.ListTablesRequest;
import com.google.bigtable.admin.v2.ListTablesResponse;
import com.google.bigtable.admin.v2.ModifyColumnFamiliesRequest;
import com.google.bigtable.admin.v2.RestoreTableRequest;
import com.google.bigtable.admin.v2.SchemaBundle;
import com.google.bigtable.admin.v2.Snapshot;
import com.google.bigtable.admin.v2.SnapshotTableRequest;
import com.google.bigtable.admin.v2.Table;
import com.google.bigtable.admin.v2.UndeleteTableRequest;
import com.google.bigtable.admin.v2.UpdateAuthorizedViewRequest;
import com.google.bigtable.admin.v2.UpdateBackupRequest;
import com.google.bigtable.admin.v2.UpdateSchemaBundleRequest;
import com.google.bigtable.admin.v2.UpdateTableMetadata;
import com.google.bigtable.admin.v2.UpdateTableRequest;
import com.google.iam.v1.GetIamPolicyRequest;
import com.google.iam.v1.Policy;
import com.google.iam.v1.SetIamPolicyRequest;
import com.google.iam.v1.TestIamPermissionsRequest;
import com.google.iam.v1.TestIamPermissionsResponse;
import com.google.longrunning.Operation;
import com.google.protobuf.Any;
import com.google.protobuf.Empty;
import com.google.protobuf.Timestamp;
import io.tabula.actors.Stages;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TableOptions;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.cluster.routing.Router;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.protocol.errors.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.StatusReply;

/**
 * The Cloud Bigtable table-admin API over the master: table and family changes go to the
 * master (which records them and tells every node), row drops to the tablets; IAM policies
 * and authorized views go to {@link AccessService}, backups to {@link BackupService}. RPCs about
 * snapshots and schema bundles answer UNIMPLEMENTED, as does CopyBackup for now.
 */
public final class AdminService implements BigtableTableAdmin {
  private final ActorSystem<?> system;
  private final ActorRef<Master.Command> master;
  private final Router router;
  private final Duration timeout;
  /** Removes a deleted table's tablets and files from this node; completes when done. */
  private final java.util.function.Function<String, CompletionStage<Void>> onTableDeleted;
  /** IAM policies and authorized views. */
  private final AccessService access;

  /** Backups over the storage root. */
  private final BackupService backups;

  AdminService(ActorSystem<?> system, ActorRef<Master.Command> master, Router router, Duration timeout,
      java.util.function.Function<String, CompletionStage<Void>> onTableDeleted, BackupService backups) {
    this.backups = backups;
    this.system = system;
    this.master = master;
    this.router = router;
    this.timeout = timeout;
    this.onTableDeleted = onTableDeleted;
    this.access = new AccessService(this, router);
  }

  <T> CompletionStage<T> askMaster(Function<ActorRef<StatusReply<T>>, Master.Command> message) {
    return Stages.direct(AskPattern.askWithStatus(master, message::apply, timeout, system.scheduler()));
  }

  static Table toProto(String instance, TableInfo t, boolean withSchema) {
    Table.Builder b = Table.newBuilder().setName(Names.tableName(instance, t.name()));
    if (withSchema) {
      t.families().forEach((name, gc) -> {
        ColumnFamily.Builder cf = ColumnFamily.newBuilder().setGcRule(GcRules.toRule(gc));
        io.tabula.persistence.schema.Aggregator a = t.aggregates().get(name);
        if (a != null) {
          cf.setValueType(ValueTypes.toType(a));
        }
        b.putColumnFamilies(name, cf.build());
      });
      b.setGranularity(Table.TimestampGranularity.MILLIS);
    }
    // As Cloud Bigtable answers: these in every view but NAME_ONLY's name alone.
    if (withSchema) {
      b.setDeletionProtection(t.options().deletionProtection());
      long retention = t.options().changeStreamRetentionMicros();
      if (retention > 0) {
        b.setChangeStreamConfig(ChangeStreamConfig.newBuilder().setRetentionPeriod(com.google.protobuf.Duration
            .newBuilder().setSeconds(retention / 1_000_000).setNanos((int) (retention % 1_000_000) * 1000)));
      }
    }
    return b.build();
  }

  /** The most initial splits one {@code CreateTable} may carry (docs/api-coverage.md, limits). */
  static final int MAX_INITIAL_SPLITS = 100_000;

  @Override
  public CompletionStage<Table> createTable(CreateTableRequest in) {
    return GrpcErrors.unary(() -> {
      String instance = Names.instance("parent", in.getParent());
      String id = Names.checkTableId("table_id", in.getTableId());
      Map<String, GcPolicy> families = new LinkedHashMap<>();
      Map<String, io.tabula.persistence.schema.Aggregator> aggregates = new LinkedHashMap<>();
      in.getTable().getColumnFamiliesMap().forEach((name, cf) -> {
        String f = "table.column_families[" + name + "]";
        checkFamily(f, name);
        families.put(name, GcRules.toPolicy(f + ".gc_rule", cf.getGcRule()));
        io.tabula.persistence.schema.Aggregator a = ValueTypes.toAggregator(f + ".value_type", cf.hasValueType(),
            cf.getValueType());
        if (a != null) {
          aggregates.put(name, a);
        }
      });
      if (in.getInitialSplitsCount() > MAX_INITIAL_SPLITS) {
        throw GrpcErrors.invalid("initial_splits", "has " + in.getInitialSplitsCount() + " rows, over the limit of "
            + MAX_INITIAL_SPLITS + " (split the table later, or let it split as it grows)");
      }
      List<byte[]> splits = new ArrayList<>();
      for (int i = 0; i < in.getInitialSplitsCount(); i++) {
        if (in.getInitialSplits(i).getKey().isEmpty()) {
          throw GrpcErrors.invalid("initial_splits[" + i + "].key", "must not be empty");
        }
        if (in.getInitialSplits(i).getKey().size() > io.tabula.persistence.model.RowMutation.MAX_ROW_KEY_BYTES) {
          throw GrpcErrors.invalid("initial_splits[" + i + "].key", "is " + in.getInitialSplits(i).getKey().size()
              + " bytes, over the row key limit of " + io.tabula.persistence.model.RowMutation.MAX_ROW_KEY_BYTES);
        }
        splits.add(in.getInitialSplits(i).getKey().toByteArray());
      }
      long retention = retentionMicros(in.getTable());
      boolean protection = in.getTable().getDeletionProtection();
      // The options follow the creation (two steps: a table whose second step failed is made without them,
      // and the call fails, so the client sees it and may set them with UpdateTable).
      return seen(io.tabula.actors.master.StagedSplits.createTable(master, system, timeout, id, families, aggregates,
          splits))
          .thenCompose(t -> retention == 0 && !protection ? CompletableFuture.completedFuture(t)
              : seen(this.<TableInfo>askMaster(r -> new Master.ChangeOptions(id, new TableOptions.Change(
                  protection ? Boolean.TRUE : null, retention == 0 ? null : retention), r))))
          .thenApply(t -> toProto(instance, t, true));
    });
  }

  static void checkFamily(String field, String name) {
    try {
      io.tabula.persistence.schema.ColumnFamily.of(name);
    } catch (IllegalArgumentException e) {
      throw GrpcErrors.invalid(field, e.getMessage());
    }
  }

  @Override
  public CompletionStage<ListTablesResponse> listTables(ListTablesRequest in) {
    return GrpcErrors.unary(() -> {
      String instance = Names.instance("parent", in.getParent());
      boolean schema = in.getView() == Table.View.SCHEMA_VIEW || in.getView() == Table.View.FULL;
      return router.refreshedDirectory().thenApply(d -> {
        ListTablesResponse.Builder b = ListTablesResponse.newBuilder();
        d.tables().values().forEach(t -> b.addTables(toProto(instance, t, schema)));
        return b.build();
      });
    });
  }

  @Override
  public CompletionStage<Table> getTable(GetTableRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("name", in.getName());
      String instance = Names.instanceOf(in.getName());
      boolean schema = in.getView() != Table.View.NAME_ONLY;
      return router.table(table).thenApply(t -> toProto(instance, t, schema));
    });
  }

  @Override
  public CompletionStage<Empty> deleteTable(DeleteTableRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("name", in.getName());
      return seen(this.<Done>askMaster(r -> new Master.DeleteTable(table, r)))
          .thenCompose(d -> onTableDeleted.apply(table))
          .thenApply(d -> Empty.getDefaultInstance());
    });
  }

  @Override
  public CompletionStage<Table> modifyColumnFamilies(ModifyColumnFamiliesRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("name", in.getName());
      String instance = Names.instanceOf(in.getName());
      if (in.getModificationsCount() == 0) {
        throw GrpcErrors.invalid("modifications", "at least one modification is required");
      }
      List<Master.FamilyChange> changes = new ArrayList<>();
      for (int i = 0; i < in.getModificationsCount(); i++) {
        ModifyColumnFamiliesRequest.Modification m = in.getModifications(i);
        String f = "modifications[" + i + "]";
        checkFamily(f + ".id", m.getId());
        changes.add(switch (m.getModCase()) {
          case CREATE -> new Master.FamilyChange(m.getId(), Master.FamilyChange.Kind.CREATE,
              GcRules.toPolicy(f + ".create.gc_rule", m.getCreate().getGcRule()), ValueTypes.toAggregator(
                  f + ".create.value_type", m.getCreate().hasValueType(), m.getCreate().getValueType()));
          case UPDATE -> new Master.FamilyChange(m.getId(), Master.FamilyChange.Kind.UPDATE,
              GcRules.toPolicy(f + ".update.gc_rule", m.getUpdate().getGcRule()), ValueTypes.toAggregator(
                  f + ".update.value_type", m.getUpdate().hasValueType(), m.getUpdate().getValueType()));
          case DROP -> new Master.FamilyChange(m.getId(), Master.FamilyChange.Kind.DROP, GcPolicy.KEEP_ALL);
          default -> throw GrpcErrors.invalid(f, "none of create, update or drop is set");
        });
      }
      return seen(this.<TableInfo>askMaster(r -> new Master.ModifyFamilies(table, changes, r)))
          .thenApply(t -> toProto(instance, t, true));
    });
  }

  /**
   * {@code change} (a table created, changed or deleted by the master), completing only
   * once this node's copy of the directory holds it: the master publishes every change to
   * the nodes, but a request that follows the answer on this node must not overtake it.
   */
  <T> CompletionStage<T> seen(CompletionStage<T> change) {
    return change.thenCompose(v -> router.refreshedDirectory().thenApply(d -> v));
  }

  @Override
  public CompletionStage<Empty> dropRowRange(DropRowRangeRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("name", in.getName());
      byte[] prefix;
      switch (in.getTargetCase()) {
        case ROW_KEY_PREFIX -> {
          if (in.getRowKeyPrefix().isEmpty()) {
            throw GrpcErrors.invalid("row_key_prefix", "must not be empty");
          }
          prefix = in.getRowKeyPrefix().toByteArray();
        }
        case DELETE_ALL_DATA_FROM_TABLE -> prefix = new byte[0];
        default -> throw GrpcErrors.invalid("target", "neither row_key_prefix nor delete_all_data_from_table is set");
      }
      return router.<Done>askEveryTablet(table, r -> new TabletActor.DropRows(prefix, r), Done.getInstance())
          .thenApply(done -> Empty.getDefaultInstance());
    });
  }

  @Override
  public CompletionStage<GenerateConsistencyTokenResponse> generateConsistencyToken(
      GenerateConsistencyTokenRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("name", in.getName());
      return router.table(table).thenApply(t -> GenerateConsistencyTokenResponse.newBuilder()
          .setConsistencyToken("tabula-" + router.directory().version()).build());
    });
  }

  /** One copy of the data: every write acknowledged before the token was made is already readable. */
  @Override
  public CompletionStage<CheckConsistencyResponse> checkConsistency(CheckConsistencyRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("name", in.getName());
      if (in.getConsistencyToken().isEmpty()) {
        throw GrpcErrors.invalid("consistency_token", "must not be empty");
      }
      return router.table(table).thenApply(t -> CheckConsistencyResponse.newBuilder().setConsistent(true)
          .build());
    });
  }

  // ---- not offered

  private static <T> CompletionStage<T> no(String rpc) {
    return CompletableFuture.failedFuture(GrpcErrors.unimplemented(rpc));
  }

  @Override
  public CompletionStage<Operation> createTableFromSnapshot(CreateTableFromSnapshotRequest in) {
    return no("CreateTableFromSnapshot");
  }

  /** The change-stream retention Cloud Bigtable allows: 1 to 7 days. */
  static final Duration MIN_RETENTION = Duration.ofDays(1);
  static final Duration MAX_RETENTION = Duration.ofDays(7);

  /**
   * Deletion protection and change-stream retention, the fields {@code update_mask} names
   * (relative to {@code table}); {@code row_key_schema} is refused as not supported. Done at
   * once: the operation answered is already done, with the table as changed.
   */
  @Override
  public CompletionStage<Operation> updateTable(UpdateTableRequest in) {
    return GrpcErrors.unary(() -> {
      String name = in.getTable().getName();
      String table = Names.tableId("table.name", name);
      String instance = Names.instanceOf(name);
      if (in.getUpdateMask().getPathsCount() == 0) {
        throw GrpcErrors.invalid("update_mask", "must name the fields to change: deletion_protection,"
            + " change_stream_config");
      }
      Boolean protection = null;
      Long retention = null;
      for (int i = 0; i < in.getUpdateMask().getPathsCount(); i++) {
        String path = in.getUpdateMask().getPaths(i);
        switch (path) {
          case "deletion_protection" -> protection = in.getTable().getDeletionProtection();
          case "change_stream_config", "change_stream_config.retention_period" -> retention = retentionMicros(
              in.getTable());
          case "row_key_schema" -> throw GrpcErrors.status(ErrorCode.FAILED_PRECONDITION, "update_mask.paths[" + i
              + "]: row key schemas (for SQL) are not supported by Tabula", "update_mask.paths[" + i + "]");
          case "automated_backup_policy", "automated_backup_policy.retention_period",
              "automated_backup_policy.frequency" -> throw GrpcErrors.status(ErrorCode.FAILED_PRECONDITION,
                  "update_mask.paths[" + i + "]: automated backups are not supported by Tabula",
                  "update_mask.paths[" + i + "]");
          default -> throw GrpcErrors.invalid("update_mask.paths[" + i + "]", "'" + path + "' is not a field"
              + " UpdateTable changes (deletion_protection, change_stream_config)");
        }
      }
      TableOptions.Change change = new TableOptions.Change(protection, retention);
      Timestamp started = now();
      return seen(this.<TableInfo>askMaster(r -> new Master.ChangeOptions(table, change, r)))
          .thenApply(t -> Operation.newBuilder()
              .setName(name + "/operations/update-" + started.getSeconds() + started.getNanos())
              .setMetadata(Any.pack(UpdateTableMetadata.newBuilder().setName(name).setStartTime(started)
                  .setEndTime(now()).build()))
              .setDone(true)
              .setResponse(Any.pack(toProto(instance, t, true)))
              .build());
    });
  }

  /** The retention {@code table} sets, in microseconds: 0 (no change stream) when its config is cleared or unset. */
  private static long retentionMicros(Table table) {
    if (!table.hasChangeStreamConfig() || !table.getChangeStreamConfig().hasRetentionPeriod()) {
      return 0;
    }
    com.google.protobuf.Duration p = table.getChangeStreamConfig().getRetentionPeriod();
    Duration d = Duration.ofSeconds(p.getSeconds(), p.getNanos());
    if (d.compareTo(MIN_RETENTION) < 0 || d.compareTo(MAX_RETENTION) > 0) {
      throw GrpcErrors.invalid("table.change_stream_config.retention_period", "must be from 1 to 7 days, was "
          + d.getSeconds() + " s");
    }
    return d.toNanos() / 1000;
  }

  private static Timestamp now() {
    java.time.Instant now = java.time.Instant.now();
    return Timestamp.newBuilder().setSeconds(now.getEpochSecond()).setNanos(now.getNano()).build();
  }

  @Override
  public CompletionStage<Operation> undeleteTable(UndeleteTableRequest in) {
    return no("UndeleteTable");
  }

  @Override
  public CompletionStage<Operation> createAuthorizedView(CreateAuthorizedViewRequest in) {
    return access.createAuthorizedView(in);
  }

  @Override
  public CompletionStage<ListAuthorizedViewsResponse> listAuthorizedViews(ListAuthorizedViewsRequest in) {
    return access.listAuthorizedViews(in);
  }

  @Override
  public CompletionStage<AuthorizedView> getAuthorizedView(GetAuthorizedViewRequest in) {
    return access.getAuthorizedView(in);
  }

  @Override
  public CompletionStage<Operation> updateAuthorizedView(UpdateAuthorizedViewRequest in) {
    return access.updateAuthorizedView(in);
  }

  @Override
  public CompletionStage<Empty> deleteAuthorizedView(DeleteAuthorizedViewRequest in) {
    return access.deleteAuthorizedView(in);
  }

  @Override
  public CompletionStage<Operation> snapshotTable(SnapshotTableRequest in) {
    return no("SnapshotTable");
  }

  @Override
  public CompletionStage<Snapshot> getSnapshot(GetSnapshotRequest in) {
    return no("GetSnapshot");
  }

  @Override
  public CompletionStage<ListSnapshotsResponse> listSnapshots(ListSnapshotsRequest in) {
    return no("ListSnapshots");
  }

  @Override
  public CompletionStage<Empty> deleteSnapshot(DeleteSnapshotRequest in) {
    return no("DeleteSnapshot");
  }

  @Override
  public CompletionStage<Operation> createBackup(CreateBackupRequest in) {
    return backups.createBackup(in);
  }

  @Override
  public CompletionStage<Backup> getBackup(GetBackupRequest in) {
    return backups.getBackup(in);
  }

  @Override
  public CompletionStage<Backup> updateBackup(UpdateBackupRequest in) {
    return backups.updateBackup(in);
  }

  @Override
  public CompletionStage<Empty> deleteBackup(DeleteBackupRequest in) {
    return backups.deleteBackup(in);
  }

  @Override
  public CompletionStage<ListBackupsResponse> listBackups(ListBackupsRequest in) {
    return backups.listBackups(in);
  }

  @Override
  public CompletionStage<Operation> restoreTable(RestoreTableRequest in) {
    return backups.restoreTable(in, this);
  }

  @Override
  public CompletionStage<Operation> copyBackup(CopyBackupRequest in) {
    return backups.copyBackup(in);
  }

  @Override
  public CompletionStage<Policy> getIamPolicy(GetIamPolicyRequest in) {
    return BackupPolicies.names(in.getResource()) ? backups.policies().get(in) : access.getIamPolicy(in);
  }

  @Override
  public CompletionStage<Policy> setIamPolicy(SetIamPolicyRequest in) {
    return BackupPolicies.names(in.getResource()) ? backups.policies().set(in) : access.setIamPolicy(in);
  }

  @Override
  public CompletionStage<TestIamPermissionsResponse> testIamPermissions(TestIamPermissionsRequest in) {
    // Answered in front of the services (StrictCalls), where the caller is known; gRPC-Web calls reach here.
    return no("TestIamPermissions over gRPC-Web");
  }

  @Override
  public CompletionStage<Operation> createSchemaBundle(CreateSchemaBundleRequest in) {
    return no("CreateSchemaBundle");
  }

  @Override
  public CompletionStage<Operation> updateSchemaBundle(UpdateSchemaBundleRequest in) {
    return no("UpdateSchemaBundle");
  }

  @Override
  public CompletionStage<SchemaBundle> getSchemaBundle(GetSchemaBundleRequest in) {
    return no("GetSchemaBundle");
  }

  @Override
  public CompletionStage<ListSchemaBundlesResponse> listSchemaBundles(ListSchemaBundlesRequest in) {
    return no("ListSchemaBundles");
  }

  @Override
  public CompletionStage<Empty> deleteSchemaBundle(DeleteSchemaBundleRequest in) {
    return no("DeleteSchemaBundle");
  }
}
