package io.tabula.cluster.conformance;

import static com.google.cloud.bigtable.admin.v2.models.GCRules.GCRULES;
import static io.tabula.cluster.conformance.ConformanceHarness.FAMILY;
import static io.tabula.cluster.conformance.ConformanceHarness.FAMILY2;

import com.google.bigtable.admin.v2.TableName;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.ColumnFamily;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.ModifyColumnFamiliesRequest;
import com.google.cloud.bigtable.admin.v2.models.Table;
import com.google.cloud.bigtable.admin.v2.models.UpdateTableRequest;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import com.google.protobuf.TextFormat;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Conformance of the table-admin RPCs the official client uses. */
@Tag("conformance")
class AdminConformanceTest {
  @RegisterExtension
  static final ConformanceHarness harness = new ConformanceHarness();

  /** Families sorted by id, each with its GC rule as a one-line protobuf. */
  static String families(Table table) {
    return table.getColumnFamilies().stream()
        .sorted(Comparator.comparing(ColumnFamily::getId))
        .map(f -> "family " + f.getId() + " gc {" + TextFormat.shortDebugString(f.getGCRule().toProto()) + "}")
        .collect(Collectors.joining("\n"));
  }

  @Test
  void createTableWithFamiliesRulesAndSplits() {
    harness.sameWithoutTable("admin-create-table", (peer, table) -> {
      BigtableTableAdminClient admin = peer.admin();
      Table created = admin.createTable(CreateTableRequest.of(table)
          .addFamily("plain")
          .addFamily("versions", GCRULES.maxVersions(3))
          .addFamily("age", GCRULES.maxAge(7, TimeUnit.DAYS))
          .addFamily("union", GCRULES.union().rule(GCRULES.maxVersions(2)).rule(GCRULES.maxAge(1, TimeUnit.HOURS)))
          .addFamily("both", GCRULES.intersection().rule(GCRULES.maxVersions(5)).rule(GCRULES.maxAge(30, TimeUnit.SECONDS)))
          .addSplit(ByteString.copyFromUtf8("g"))
          .addSplit(ByteString.copyFromUtf8("p")));
      return "created id " + created.getId() + "\n" + families(created)
          + "\nget\n" + families(admin.getTable(table))
          + "\nlisted " + admin.listTables().contains(table)
          + "\nexists " + admin.exists(table)
          + "\nsample " + Render.sample(peer.data().sampleRowKeys(TableId.of(table)));
    });
  }

  @Test
  void modifyFamiliesAddsUpdatesAndDrops() {
    harness.same("admin-modify-families", (peer, table) -> {
      peer.data().bulkMutateRows(BulkMutation.create(TableId.of(table))
          .add("r", Mutation.create().setCell(FAMILY, "q", 1000, "kept").setCell(FAMILY2, "q", 1000, "dropped")));
      Table modified = peer.admin().modifyFamilies(ModifyColumnFamiliesRequest.of(table)
          .addFamily("added", GCRULES.maxVersions(1))
          .updateFamily(FAMILY, GCRULES.maxVersions(2))
          .dropFamily(FAMILY2));
      return "returned\n" + families(modified)
          + "\nget\n" + families(peer.admin().getTable(table))
          + "\nrows\n" + Render.rows(peer.data().readRows(Query.create(TableId.of(table))));
    });
  }

  @Test
  void deleteTable() {
    harness.same("admin-delete-table", (peer, table) -> {
      peer.admin().deleteTable(table);
      return "listed " + peer.admin().listTables().contains(table)
          + "\nexists " + peer.admin().exists(table)
          + "\nget " + Render.outcome(() -> peer.admin().getTable(table).getId())
          + "\nread " + Render.outcome(() -> Render.rows(peer.data().readRows(Query.create(TableId.of(table)))))
          + "\ndelete again " + Render.outcome(() -> {
            peer.admin().deleteTable(table);
            return "ok";
          });
    });
  }

  @Test
  void deletionProtectionKeepsTheTableAndItsFamilies() {
    harness.same("admin-deletion-protection", (peer, table) -> {
      BigtableTableAdminClient admin = peer.admin();
      peer.data().bulkMutateRows(BulkMutation.create(TableId.of(table))
          .add("r", Mutation.create().setCell(FAMILY, "q", 1000, "v").setCell(FAMILY2, "q", 1000, "w")));
      Table on = admin.updateTable(UpdateTableRequest.of(table).setDeletionProtection(true));
      String protectedState = "returned protected " + on.isDeletionProtected()
          + "\nget protected " + admin.getTable(table).isDeletionProtected()
          + "\ndelete " + Render.outcome(() -> {
            admin.deleteTable(table);
            return "ok";
          })
          + "\ndrop family " + Render.outcome(() -> families(admin.modifyFamilies(ModifyColumnFamiliesRequest
              .of(table).dropFamily(FAMILY2))))
          + "\nadd family " + Render.outcome(() -> families(admin.modifyFamilies(ModifyColumnFamiliesRequest
              .of(table).addFamily("more"))))
          + "\nrows " + Render.rows(peer.data().readRows(Query.create(TableId.of(table))));
      Table off = admin.updateTable(UpdateTableRequest.of(table).setDeletionProtection(false));
      return protectedState + "\nreturned protected " + off.isDeletionProtected()
          + "\ndrop family " + Render.outcome(() -> families(admin.modifyFamilies(ModifyColumnFamiliesRequest
              .of(table).dropFamily(FAMILY2))))
          + "\ndelete " + Render.outcome(() -> {
            admin.deleteTable(table);
            return "ok";
          })
          + "\nexists " + admin.exists(table);
    });
  }

  /**
   * The emulator echoes a retention back but keeps none, and takes any; Tabula keeps it with the
   * table (for change streams) and, as Cloud Bigtable, takes 1 to 7 days only.
   */
  @Test
  void changeStreamRetentionIsKeptWithTheTable() {
    harness.differs("admin-change-stream-retention", """
        returned PT36H
        get null
        eight days PT192H
        off null
        get null""", """
        returned PT36H
        get PT36H
        eight days error INVALID_ARGUMENT
        off null
        get null""", (peer, table) -> {
      BigtableTableAdminClient admin = peer.admin();
      Table on = admin.updateTable(UpdateTableRequest.of(table).addChangeStreamRetention(
          org.threeten.bp.Duration.ofHours(36)));
      String set = "returned " + on.getChangeStreamRetention() + "\nget " + admin.getTable(table)
          .getChangeStreamRetention();
      String tooLong = Render.outcome(() -> admin.updateTable(UpdateTableRequest.of(table).addChangeStreamRetention(
          org.threeten.bp.Duration.ofDays(8))).getChangeStreamRetention().toString());
      Table off = admin.updateTable(UpdateTableRequest.of(table).disableChangeStreamRetention());
      return set + "\neight days " + tooLong + "\noff " + off.getChangeStreamRetention()
          + "\nget " + admin.getTable(table).getChangeStreamRetention();
    });
  }

  /**
   * Backups, which the emulator does not serve (it exits on them): a backup holds the rows
   * written before it, and a table restored from it serves them, through the node the client
   * calls (in a cluster, the tablets listed and the table restored are other nodes' too).
   */
  @Test
  void aBackupRestoresIntoATableWithTheRowsWrittenBeforeIt() {
    harness.tabulaAlone("admin-backup-restore", """
        backup READY of %TABLE%
        restored
        row "a"
          cf:"q" @1000 = "before"
        row "m"
          cf:"q" @1000 = "before"
        row "z"
          cf:"q" @1000 = "before"
        3 rows
        listed true
        deleted: not found""", (peer, table) -> {
          BigtableTableAdminClient admin = peer.admin();
          BulkMutation before = BulkMutation.create(TableId.of(table));
          for (String key : new String[] {"a", "m", "z"}) {
            before.add(key, Mutation.create().setCell(FAMILY, "q", 1000, "before"));
          }
          peer.data().bulkMutateRows(before);
          String backupId = table + "-b";
          com.google.cloud.bigtable.admin.v2.models.Backup b = admin.createBackup(
              com.google.cloud.bigtable.admin.v2.models.CreateBackupRequest.of("tabula", backupId)
                  .setSourceTableId(table).setExpireTime(org.threeten.bp.Instant.now().plusSeconds(86_400)));
          peer.data().bulkMutateRows(BulkMutation.create(TableId.of(table))
              .add("after", Mutation.create().setCell(FAMILY, "q", 1000, "after"))
              .add("a", Mutation.create().setCell(FAMILY, "q", 1000, "changed")));
          try {
            admin.restoreTable(com.google.cloud.bigtable.admin.v2.models.RestoreTableRequest.of("tabula", backupId)
                .setTableId(table + "-r"));
          } catch (java.util.concurrent.ExecutionException | InterruptedException e) {
            throw new IllegalStateException(e);
          }
          String out = "backup " + b.getState() + " of " + b.getSourceTableId().replace(table, "%TABLE%")
              + "\nrestored\n" + Render.rows(peer.data().readRows(Query.create(TableId.of(table + "-r"))))
              + "\nlisted " + admin.listBackups("tabula").contains(backupId);
          admin.deleteBackup("tabula", backupId);
          return out + "\ndeleted: " + Render.outcome(() -> admin.getBackup("tabula", backupId).getId())
              .replace("error NOT_FOUND", "not found");
        });
  }

  @Test
  void dropRowRangeByPrefixAndAll() {
    harness.same("admin-drop-row-range", (peer, table) -> {
      BulkMutation bulk = BulkMutation.create(TableId.of(table));
      for (String key : new String[] {"a", "ab", "abc", "b", "ba"}) {
        bulk.add(key, Mutation.create().setCell(FAMILY, "q", 1000, key));
      }
      peer.data().bulkMutateRows(bulk);
      peer.admin().dropRowRange(table, "ab");
      String afterPrefix = Render.rows(peer.data().readRows(Query.create(TableId.of(table))));
      peer.admin().dropAllRows(table);
      return afterPrefix + "\nafter drop all\n" + Render.rows(peer.data().readRows(Query.create(TableId.of(table))))
          + "\nfamilies kept\n" + families(peer.admin().getTable(table));
    });
  }

  @Test
  void generateAndCheckConsistency() {
    harness.same("admin-consistency", (peer, table) -> {
      peer.data().bulkMutateRows(BulkMutation.create(TableId.of(table))
          .add("r", Mutation.create().setCell(FAMILY, "q", 1000, "v")));
      TableName name = TableName.of(ConformancePeer.PROJECT, ConformancePeer.INSTANCE, table);
      String token = peer.admin().getBaseClient().generateConsistencyToken(name).getConsistencyToken();
      boolean consistent = peer.admin().getBaseClient().checkConsistency(name, token).getConsistent();
      peer.admin().awaitReplication(table);
      return "token non-empty " + !token.isEmpty() + "\nconsistent " + consistent + "\nawaitReplication ok";
    });
  }
}
