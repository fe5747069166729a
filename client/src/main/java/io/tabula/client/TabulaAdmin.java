package io.tabula.client;

import com.google.bigtable.admin.v2.ChangeStreamConfig;
import com.google.bigtable.admin.v2.ColumnFamily;
import com.google.bigtable.admin.v2.CreateTableRequest;
import com.google.bigtable.admin.v2.DeleteTableRequest;
import com.google.bigtable.admin.v2.DropRowRangeRequest;
import com.google.bigtable.admin.v2.GetTableRequest;
import com.google.bigtable.admin.v2.ListTablesRequest;
import com.google.iam.v1.GetIamPolicyRequest;
import com.google.iam.v1.SetIamPolicyRequest;
import com.google.bigtable.admin.v2.ModifyColumnFamiliesRequest.Modification;
import com.google.bigtable.admin.v2.ModifyColumnFamiliesRequest;
import com.google.bigtable.admin.v2.Table;
import com.google.bigtable.admin.v2.UpdateTableRequest;
import com.google.protobuf.ByteString;
import io.tabula.protocol.groups.Compression;
import io.tabula.protocol.groups.GetLocalityGroupsRequest;
import io.tabula.protocol.groups.LocalityGroup;
import io.tabula.protocol.groups.SetLocalityGroupRequest;
import io.tabula.protocol.groups.TableLocalityGroups;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Table administration (the Cloud Bigtable table-admin API) through a {@link TabulaClient}'s
 * connection to its seed node: create, describe, list and delete tables, and add, change
 * and drop column families with their {@link GcPolicy}; set how long a table keeps its change
 * stream; and, through Tabula's own service, set tables' locality groups; read and change
 * tables' IAM policies. Reads are retried like reads;
 * changes are not. Thread-safe.
 */
public final class TabulaAdmin {
  private final TabulaClient client;
  private final Retrier retrier;

  TabulaAdmin(TabulaClient client, Retrier retrier) {
    this.client = client;
    this.retrier = retrier;
  }

  /** Creates a table whose families keep every version. */
  public CompletionStage<Void> createTable(String table, String... families) {
    Map<String, GcPolicy> f = new LinkedHashMap<>();
    for (String family : families) {
      f.put(Bytes.family(family), GcPolicy.never());
    }
    return createTable(table, f);
  }

  public CompletionStage<Void> createTable(String table, Map<String, GcPolicy> families) {
    return createTable(table, families, List.of());
  }

  /**
   * Creates a table with its families and, at once, one tablet per range between the
   * {@code splits} (row keys, each the first row of a tablet), which a cluster spreads over
   * its nodes.
   */
  public CompletionStage<Void> createTable(String table, Map<String, GcPolicy> families, List<byte[]> splits) {
    return createTable(table, families, splits, Duration.ZERO);
  }

  /**
   * Creates a table as {@link #createTable(String, Map, List)} does that keeps a change stream
   * for {@code changeStreamRetention} (1 to 7 days; zero for none), read with {@link
   * TabulaClient#changeSource}.
   */
  public CompletionStage<Void> createTable(String table, Map<String, GcPolicy> families, List<byte[]> splits,
      Duration changeStreamRetention) {
    String name = client.tableName(table);
    Table.Builder t = Table.newBuilder();
    if (!changeStreamRetention.isZero()) {
      t.setChangeStreamConfig(changeStreamConfig(changeStreamRetention));
    }
    families.forEach((f, p) -> t.putColumnFamilies(Bytes.family(f), ColumnFamily.newBuilder().setGcRule(p.toProto())
        .build()));
    CreateTableRequest.Builder b = CreateTableRequest.newBuilder().setParent(client.instanceName()).setTableId(table)
        .setTable(t);
    splits.forEach(k -> b.addInitialSplits(CreateTableRequest.Split.newBuilder().setKey(ByteString.copyFrom(k))));
    CreateTableRequest req = b.build();
    return retrier.run(false, n -> client.seed().admin.createTable(req), err -> { })
        .thenApply(x -> {
          client.locations().invalidate(name);
          return null;
        });
  }

  public CompletionStage<Void> deleteTable(String table) {
    String name = client.tableName(table);
    return retrier.run(false, n -> client.seed().admin.deleteTable(DeleteTableRequest.newBuilder().setName(name)
        .build()), err -> { }).thenApply(x -> {
          client.locations().invalidate(name);
          return null;
        });
  }

  /** The ids of every table, in name order. */
  public CompletionStage<List<String>> listTables() {
    ListTablesRequest req = ListTablesRequest.newBuilder().setParent(client.instanceName()).build();
    return retrier.run(true, n -> client.seed().admin.listTables(req), err -> { }).thenApply(resp -> {
      List<String> ids = new ArrayList<>();
      for (Table t : resp.getTablesList()) {
        ids.add(t.getName().substring(t.getName().lastIndexOf('/') + 1));
      }
      ids.sort(null);
      return ids;
    });
  }

  public CompletionStage<TableDescription> describe(String table) {
    return schema(table).thenApply(t -> {
      Map<String, GcPolicy> families = new LinkedHashMap<>();
      Map<String, Aggregate> aggregates = new LinkedHashMap<>();
      t.getColumnFamiliesMap().forEach((f, cf) -> {
        families.put(f, GcPolicy.fromProto(cf.getGcRule()));
        Aggregate a = cf.hasValueType() ? Aggregate.fromProto(cf.getValueType()) : null;
        if (a != null) {
          aggregates.put(f, a);
        }
      });
      return new TableDescription(table, families, aggregates);
    });
  }

  public CompletionStage<Void> createFamily(String table, String family, GcPolicy policy) {
    return modify(table, Modification.newBuilder().setId(Bytes.family(family))
        .setCreate(ColumnFamily.newBuilder().setGcRule(policy.toProto())).build());
  }

  /**
   * Adds an aggregate column family (docs/aggregates.md), whose cells fold what {@link
   * RowMutation#addToCell} writes to them; its aggregate never changes.
   */
  public CompletionStage<Void> createFamily(String table, String family, GcPolicy policy, Aggregate aggregate) {
    return modify(table, Modification.newBuilder().setId(Bytes.family(family))
        .setCreate(ColumnFamily.newBuilder().setGcRule(policy.toProto()).setValueType(aggregate.toProto())).build());
  }

  public CompletionStage<Void> setGcPolicy(String table, String family, GcPolicy policy) {
    return modify(table, Modification.newBuilder().setId(Bytes.family(family))
        .setUpdate(ColumnFamily.newBuilder().setGcRule(policy.toProto())).build());
  }

  public CompletionStage<Void> deleteFamily(String table, String family) {
    return modify(table, Modification.newBuilder().setId(Bytes.family(family)).setDrop(true).build());
  }

  /** Deletes every row whose key starts with {@code prefix}. */
  public CompletionStage<Void> dropRowsWithPrefix(String table, com.google.protobuf.ByteString prefix) {
    DropRowRangeRequest req = DropRowRangeRequest.newBuilder().setName(client.tableName(table))
        .setRowKeyPrefix(prefix).build();
    return retrier.run(true, n -> client.seed().admin.dropRowRange(req), err -> { }).thenApply(x -> null);
  }

  /**
   * Turns table {@code table}'s deletion protection on or off: while on, deleting the table or
   * one of its column families is refused (FAILED_PRECONDITION).
   */
  public CompletionStage<Void> setDeletionProtection(String table, boolean on) {
    UpdateTableRequest req = UpdateTableRequest.newBuilder()
        .setTable(Table.newBuilder().setName(client.tableName(table)).setDeletionProtection(on))
        .setUpdateMask(com.google.protobuf.FieldMask.newBuilder().addPaths("deletion_protection"))
        .build();
    // Setting a value twice leaves it as once: retried like a read.
    return retrier.run(true, n -> client.seed().admin.updateTable(req), err -> { }).thenApply(x -> null);
  }

  /** Whether table {@code table} is protected from deletion. */
  public CompletionStage<Boolean> deletionProtection(String table) {
    return schema(table).thenApply(Table::getDeletionProtection);
  }

  /** Table {@code table} as GetTable's schema view gives it. */
  private CompletionStage<Table> schema(String table) {
    GetTableRequest req = GetTableRequest.newBuilder().setName(client.tableName(table))
        .setView(Table.View.SCHEMA_VIEW).build();
    return retrier.run(true, n -> client.seed().admin.getTable(req), err -> { });
  }

  /**
   * Keeps table {@code table}'s changes for {@code retention} (1 to 7 days), to be read with
   * {@link TabulaClient#changeSource}; {@link Duration#ZERO} turns its change stream off and
   * drops the changes kept (docs/change-streams.md).
   */
  public CompletionStage<Void> setChangeStreamRetention(String table, Duration retention) {
    Table.Builder t = Table.newBuilder().setName(client.tableName(table));
    if (!retention.isZero()) {
      t.setChangeStreamConfig(changeStreamConfig(retention));
    }
    UpdateTableRequest req = UpdateTableRequest.newBuilder().setTable(t)
        .setUpdateMask(com.google.protobuf.FieldMask.newBuilder().addPaths("change_stream_config")).build();
    // Setting a value twice leaves it as once: retried like a read.
    return retrier.run(true, n -> client.seed().admin.updateTable(req), err -> { }).thenApply(x -> null);
  }

  /** How long table {@code table} keeps its changes; zero if it keeps no change stream. */
  public CompletionStage<Duration> changeStreamRetention(String table) {
    return schema(table).thenApply(t -> {
      com.google.protobuf.Duration d = t.getChangeStreamConfig().getRetentionPeriod();
      return Duration.ofSeconds(d.getSeconds(), d.getNanos());
    });
  }

  private static ChangeStreamConfig changeStreamConfig(Duration retention) {
    return ChangeStreamConfig.newBuilder().setRetentionPeriod(com.google.protobuf.Duration.newBuilder()
        .setSeconds(retention.getSeconds()).setNanos(retention.getNano())).build();
  }

  /** The cluster backups live under: a Tabula instance has one, {@code tabula} unless its nodes say otherwise. */
  public static final String CLUSTER = "tabula";

  private String backupName(String backupId) {
    return client.instanceName() + "/clusters/" + CLUSTER + "/backups/" + backupId;
  }

  /**
   * Backs table {@code table} up as {@code backupId}, kept for {@code ttl} (6 hours to 90 days):
   * every write acknowledged before the call is in it (docs/backups.md).
   */
  public CompletionStage<BackupDescription> createBackup(String table, String backupId, java.time.Duration ttl) {
    java.time.Instant expire = java.time.Instant.now().plus(ttl);
    com.google.bigtable.admin.v2.CreateBackupRequest req = com.google.bigtable.admin.v2.CreateBackupRequest.newBuilder()
        .setParent(client.instanceName() + "/clusters/" + CLUSTER).setBackupId(backupId)
        .setBackup(com.google.bigtable.admin.v2.Backup.newBuilder().setSourceTable(client.tableName(table))
            .setExpireTime(timestamp(expire)))
        .build();
    return retrier.run(false, n -> client.seed().admin.createBackup(req), err -> { })
        .thenApply(op -> BackupDescription.of(unpack(op.getResponse(), com.google.bigtable.admin.v2.Backup.class)));
  }

  /**
   * Copies backup {@code sourceBackupId} as {@code backupId}, kept for {@code ttl} (6 hours to 90
   * days after the source began). {@code sourceInstance} null: a backup of this instance, and
   * the copy names the same files; otherwise an instance whose storage root the nodes may read
   * ({@code tabula.backup.copy-sources}), from its cluster {@code sourceCluster} (null: {@value
   * #CLUSTER}), and every file is copied and checked (docs/backups.md).
   */
  public CompletionStage<BackupDescription> copyBackup(String sourceInstance, String sourceCluster,
      String sourceBackupId, String backupId, java.time.Duration ttl) {
    String source = sourceInstance == null ? backupName(sourceBackupId)
        : "projects/" + client.instanceName().split("/")[1] + "/instances/" + sourceInstance + "/clusters/"
            + (sourceCluster == null ? CLUSTER : sourceCluster) + "/backups/" + sourceBackupId;
    com.google.bigtable.admin.v2.CopyBackupRequest req = com.google.bigtable.admin.v2.CopyBackupRequest.newBuilder()
        .setParent(client.instanceName() + "/clusters/" + CLUSTER).setBackupId(backupId).setSourceBackup(source)
        .setExpireTime(timestamp(java.time.Instant.now().plus(ttl))).build();
    return retrier.run(false, n -> client.seed().admin.copyBackup(req), err -> { })
        .thenApply(op -> BackupDescription.of(unpack(op.getResponse(), com.google.bigtable.admin.v2.Backup.class)));
  }

  /** Every backup, newest first. */
  public CompletionStage<List<BackupDescription>> listBackups() {
    com.google.bigtable.admin.v2.ListBackupsRequest req = com.google.bigtable.admin.v2.ListBackupsRequest.newBuilder()
        .setParent(client.instanceName() + "/clusters/" + CLUSTER).build();
    return listFrom(req, new ArrayList<>());
  }

  private CompletionStage<List<BackupDescription>> listFrom(com.google.bigtable.admin.v2.ListBackupsRequest req,
      List<BackupDescription> out) {
    return retrier.run(true, n -> client.seed().admin.listBackups(req), err -> { }).thenCompose(page -> {
      page.getBackupsList().forEach(b -> out.add(BackupDescription.of(b)));
      return page.getNextPageToken().isEmpty() ? java.util.concurrent.CompletableFuture.completedFuture(out)
          : listFrom(req.toBuilder().setPageToken(page.getNextPageToken()).build(), out);
    });
  }

  /** Keeps backup {@code backupId} until {@code ttl} from now. */
  public CompletionStage<BackupDescription> updateBackup(String backupId, java.time.Duration ttl) {
    com.google.bigtable.admin.v2.UpdateBackupRequest req = com.google.bigtable.admin.v2.UpdateBackupRequest.newBuilder()
        .setBackup(com.google.bigtable.admin.v2.Backup.newBuilder().setName(backupName(backupId))
            .setExpireTime(timestamp(java.time.Instant.now().plus(ttl))))
        .setUpdateMask(com.google.protobuf.FieldMask.newBuilder().addPaths("expire_time")).build();
    return retrier.run(true, n -> client.seed().admin.updateBackup(req), err -> { }).thenApply(BackupDescription::of);
  }

  public CompletionStage<Void> deleteBackup(String backupId) {
    com.google.bigtable.admin.v2.DeleteBackupRequest req = com.google.bigtable.admin.v2.DeleteBackupRequest.newBuilder()
        .setName(backupName(backupId)).build();
    return retrier.run(false, n -> client.seed().admin.deleteBackup(req), err -> { }).thenApply(x -> null);
  }

  /** Makes table {@code table} from backup {@code backupId}: it serves at once (docs/backups.md). */
  public CompletionStage<Void> restore(String table, String backupId) {
    com.google.bigtable.admin.v2.RestoreTableRequest req = com.google.bigtable.admin.v2.RestoreTableRequest.newBuilder()
        .setParent(client.instanceName()).setTableId(table).setBackup(backupName(backupId)).build();
    return retrier.run(false, n -> client.seed().admin.restoreTable(req), err -> { }).thenApply(x -> null);
  }

  private static com.google.protobuf.Timestamp timestamp(java.time.Instant i) {
    return com.google.protobuf.Timestamp.newBuilder().setSeconds(i.getEpochSecond()).setNanos(i.getNano()).build();
  }

  private static <T extends com.google.protobuf.Message> T unpack(com.google.protobuf.Any any, Class<T> type) {
    try {
      return any.unpack(type);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IllegalStateException("the node answered an operation whose response is not a " + type.getSimpleName(),
          e);
    }
  }

  /** The table's locality groups, the default group first, then by name. */
  public CompletionStage<List<LocalityGroupDescription>> localityGroups(String table) {
    GetLocalityGroupsRequest req = GetLocalityGroupsRequest.newBuilder().setTableName(client.tableName(table)).build();
    return retrier.run(true, n -> client.seed().groups.getLocalityGroups(req), err -> { })
        .thenApply(TabulaAdmin::groups);
  }

  /** Holds locality group {@code group} of the table in memory, or not; creates the group if it is new. */
  public CompletionStage<List<LocalityGroupDescription>> setInMemory(String table, String group, boolean inMemory) {
    return setLocalityGroup(table, group, inMemory, null, List.of());
  }

  /**
   * Creates or changes locality group {@code group} of the table (paper §6) and creates
   * {@code families} in it, keeping every version (see {@link #setGcPolicy}). A null setting
   * keeps the group's (a new group: on disk, uncompressed). A family already in another group
   * is refused: a family's group is set when the family is created. Answers the table's groups
   * as changed.
   */
  public CompletionStage<List<LocalityGroupDescription>> setLocalityGroup(String table, String group,
      Boolean inMemory, LocalityGroupDescription.Compression compression, List<String> families) {
    SetLocalityGroupRequest.Builder b = SetLocalityGroupRequest.newBuilder().setTableName(client.tableName(table))
        .setGroup(group);
    if (inMemory != null) {
      b.setInMemory(inMemory);
    }
    if (compression != null) {
      b.setCompression(switch (compression) {
        case NONE -> Compression.COMPRESSION_NONE;
        case LZ4 -> Compression.COMPRESSION_LZ4;
        case ZSTD -> Compression.COMPRESSION_ZSTD;
      });
    }
    families.forEach(f -> b.addFamilies(Bytes.family(f)));
    SetLocalityGroupRequest req = b.build();
    return retrier.run(false, n -> client.seed().groups.setLocalityGroup(req), err -> { })
        .thenApply(TabulaAdmin::groups);
  }

  private static List<LocalityGroupDescription> groups(TableLocalityGroups t) {
    List<LocalityGroupDescription> out = new ArrayList<>();
    for (LocalityGroup g : t.getGroupsList()) {
      LocalityGroupDescription.Compression c = switch (g.getCompression()) {
        case COMPRESSION_LZ4 -> LocalityGroupDescription.Compression.LZ4;
        case COMPRESSION_ZSTD -> LocalityGroupDescription.Compression.ZSTD;
        default -> LocalityGroupDescription.Compression.NONE;
      };
      out.add(new LocalityGroupDescription(g.getName(), g.getInMemory(), c, g.getFamiliesList()));
    }
    return out;
  }

  private CompletionStage<Void> modify(String table, Modification m) {
    ModifyColumnFamiliesRequest req = ModifyColumnFamiliesRequest.newBuilder().setName(client.tableName(table))
        .addModifications(m).build();
    return retrier.run(false, n -> client.seed().admin.modifyColumnFamilies(req), err -> { }).thenApply(x -> null);
  }

  /**
   * Table {@code table}'s IAM policy: its members by role, and its etag (the version a change
   * is made against). A role given without {@code roles/} is taken as a Cloud Bigtable one
   * ({@code reader} is {@code roles/bigtable.reader}).
   */
  public CompletionStage<TablePolicy> policy(String table) {
    GetIamPolicyRequest req = GetIamPolicyRequest.newBuilder().setResource(client.tableName(table)).build();
    return retrier.run(true, n -> client.seed().admin.getIamPolicy(req), err -> { }).thenApply(TablePolicy::of);
  }

  /** Gives {@code member} role {@code role} on {@code table}; answers the policy as it is then. */
  public CompletionStage<TablePolicy> grant(String table, String role, String member) {
    return changePolicy(table, p -> p.with(TablePolicy.role(role), member), POLICY_ATTEMPTS);
  }

  /** Takes role {@code role} on {@code table} from {@code member}; answers the policy as it is then. */
  public CompletionStage<TablePolicy> revoke(String table, String role, String member) {
    return changePolicy(table, p -> p.without(TablePolicy.role(role), member), POLICY_ATTEMPTS);
  }

  /** How often a policy change is read and made again when someone else changed the policy meanwhile. */
  private static final int POLICY_ATTEMPTS = 5;

  /** Reads the policy, changes it and writes it back against its etag; again if it changed meanwhile (ABORTED). */
  private CompletionStage<TablePolicy> changePolicy(String table, java.util.function.UnaryOperator<TablePolicy> change,
      int attempts) {
    return policy(table).thenCompose(p -> retrier.run(false, n -> client.seed().admin.setIamPolicy(
        SetIamPolicyRequest.newBuilder().setResource(client.tableName(table)).setPolicy(change.apply(p).toProto())
            .build()), err -> { })
        .thenApply(TablePolicy::of)
        .exceptionallyCompose(err -> {
          TabulaException e = Failures.of(err);
          return e.code() == io.grpc.Status.Code.ABORTED && attempts > 1 ? changePolicy(table, change, attempts - 1)
              : java.util.concurrent.CompletableFuture.failedStage(e);
        }));
  }
}
