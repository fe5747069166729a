package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.rpc.AlreadyExistsException;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.Backup;
import com.google.cloud.bigtable.admin.v2.models.CreateBackupRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.RestoreTableRequest;
import com.google.cloud.bigtable.admin.v2.models.UpdateBackupRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import io.tabula.cluster.TabulaNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.threeten.bp.Instant;
import org.threeten.bp.temporal.ChronoUnit;

/**
 * Backups through the official Java admin and data clients against a node (docs/backups.md):
 * a backup holds exactly the rows written before it, whatever is written or deleted after; it
 * outlives its table, with the master's sweep running every half second; a table restored
 * from it serves those rows and takes writes; the backup can be listed, read, given a new
 * expiry and deleted, and a table restored from it keeps serving after, sweeps later. Bad requests get the status Cloud Bigtable gives, naming the field.
 */
class BackupsTest {
  private static final String CLUSTER = "tabula";

  @TempDir
  Path dir;

  private static List<String> keys(BigtableDataClient data, String table) {
    List<String> out = new ArrayList<>();
    for (Row r : data.readRows(Query.create(TableId.of(table)))) {
      out.add(r.getKey().toStringUtf8());
    }
    return out;
  }

  /** The master's sweep every half second with a grace of 4 s: the tests wait sweeps out. */
  private static final java.time.Duration GRACE = java.time.Duration.ofSeconds(4);

  private TabulaNode sweepingNode() {
    return TabulaNode.start(com.typesafe.config.ConfigFactory.parseMap(java.util.Map.of(
        "tabula.node.data-dir", dir.toString(), "tabula.node.grpc-port", 0, "tabula.node.http-port", 0,
        "tabula.master.sweep-files-every", "500ms", "tabula.master.sweep-files-grace", GRACE.toMillis() + "ms")));
  }

  /** Long enough for two sweeps a grace apart to find a file unnamed, and for it to be older than the grace. */
  private static void sweepsPass() throws InterruptedException {
    Thread.sleep(GRACE.multipliedBy(2).plusSeconds(2).toMillis());
  }

  @Test
  void aBackupKeepsItsMomentOutlivesItsTableAndRestoresIntoATableThatServes() throws Exception {
    try (TabulaNode node = sweepingNode();
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      admin.createTable(CreateTableRequest.of("orders").addFamily("cf").addSplit(
          com.google.protobuf.ByteString.copyFromUtf8("m")));
      BulkMutation before = BulkMutation.create(TableId.of("orders"));
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        String key = (i % 2 == 0 ? "a" : "x") + String.format("%03d", i);
        before.add(key, Mutation.create().setCell("cf", "q", 1000, "v" + i));
        expected.add(key);
      }
      data.bulkMutateRows(before);
      expected.sort(null);
      Instant expire = Instant.now().plus(7, ChronoUnit.DAYS);

      Backup b = admin.createBackup(CreateBackupRequest.of(CLUSTER, "orders-1").setSourceTableId("orders")
          .setExpireTime(expire));
      assertEquals("orders-1", b.getId());
      assertEquals("orders", b.getSourceTableId());
      assertEquals(Backup.State.READY, b.getState());
      assertTrue(b.getSizeBytes() > 0, "size " + b.getSizeBytes());
      assertFalse(b.getStartTime().isAfter(b.getEndTime()));

      // After the backup: a write and a delete the backup must not see.
      data.mutateRow(RowMutation.create(TableId.of("orders"), "later").setCell("cf", "q", 1000, "no"));
      data.mutateRow(RowMutation.create(TableId.of("orders"), "a000").deleteRow());
      assertEquals(List.of("orders-1"), admin.listBackups(CLUSTER));
      // Its operation, through google.longrunning.Operations, as the client's own polling would read it.
      com.google.longrunning.OperationsClient operations = admin.getBaseClient().getOperationsClient();
      String backupName = "projects/" + ConformancePeer.PROJECT + "/instances/" + ConformancePeer.INSTANCE
          + "/clusters/" + CLUSTER + "/backups/orders-1";
      com.google.longrunning.Operation op = operations.getOperation(backupName + "/operations/create");
      assertTrue(op.getDone());
      assertEquals(backupName, op.getResponse().unpack(com.google.bigtable.admin.v2.Backup.class).getName());
      assertEquals(List.of(op.getName()), java.util.stream.StreamSupport.stream(operations.listOperations(
          "projects/" + ConformancePeer.PROJECT + "/instances/" + ConformancePeer.INSTANCE, "").iterateAll()
          .spliterator(), false).map(com.google.longrunning.Operation::getName).toList());
      assertThrows(NotFoundException.class, () -> operations.getOperation(backupName + "x/operations/create"));
      assertEquals(b.getSizeBytes(), admin.getBackup(CLUSTER, "orders-1").getSizeBytes());

      admin.deleteTable("orders");
      sweepsPass();
      try (java.util.stream.Stream<Path> left = Files.walk(dir.resolve("tables/orders"))) {
        assertTrue(left.noneMatch(p -> p.getFileName().toString().startsWith("MANIFEST")),
            "the deleted table's manifests were swept, so the sweeps ran");
      }
      admin.restoreTable(RestoreTableRequest.of(CLUSTER, "orders-1").setTableId("orders-back"));
      assertEquals(expected, keys(data, "orders-back"), "exactly the rows written before the backup");
      Row row = data.readRow(TableId.of("orders-back"), "x001");
      assertEquals("v1", row.getCells("cf", "q").get(0).getValue().toStringUtf8());
      data.mutateRow(RowMutation.create(TableId.of("orders-back"), "new").setCell("cf", "q", 1000, "yes"));
      assertTrue(keys(data, "orders-back").contains("new"));

      Instant later = Instant.now().plus(30, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS);
      assertEquals(later, admin.updateBackup(UpdateBackupRequest.of(CLUSTER, "orders-1").setExpireTime(later))
          .getExpireTime());
      assertEquals(later, admin.getBackup(CLUSTER, "orders-1").getExpireTime());

      admin.deleteBackup(CLUSTER, "orders-1");
      sweepsPass(); // the restored table alone names the files now, in the deleted table's folders
      assertThrows(NotFoundException.class, () -> admin.getBackup(CLUSTER, "orders-1"));
      assertEquals(List.of(), admin.listBackups(CLUSTER));
      List<String> now = new ArrayList<>(expected);
      now.add("new");
      now.sort(null);
      assertEquals(now, keys(data, "orders-back"), "the restored table keeps serving without its backup");
    }
  }

  /**
   * The master deletes a backup whose expire time has passed, at its next sweep, and the files
   * only it named go with the sweeps after. The API refuses an expire time less than six hours
   * ahead, so the test writes the backup's next expiry version itself, in the past, as the
   * clock passing it would leave things.
   */
  @Test
  void anExpiredBackupIsDeletedByTheMaster() throws Exception {
    try (TabulaNode node = sweepingNode();
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      admin.createTable(CreateTableRequest.of("t").addFamily("cf"));
      data.mutateRow(RowMutation.create(TableId.of("t"), "r").setCell("cf", "q", 1000, "v"));
      admin.createBackup(CreateBackupRequest.of(CLUSTER, "soon").setSourceTableId("t")
          .setExpireTime(Instant.now().plus(7, ChronoUnit.DAYS)));
      admin.createBackup(CreateBackupRequest.of(CLUSTER, "later").setSourceTableId("t")
          .setExpireTime(Instant.now().plus(7, ChronoUnit.DAYS)));
      io.tabula.persistence.storage.FileStorage root = new io.tabula.persistence.storage.FileStorage(dir);
      io.tabula.persistence.backup.BackupExpiry.Versioned v = io.tabula.persistence.backup.BackupExpiry.read(root,
          "soon");
      long past = System.currentTimeMillis() * 1000 - 60_000_000L;
      assertTrue(io.tabula.persistence.backup.BackupExpiry.write(root, "soon", v.version() + 1,
          new io.tabula.persistence.backup.BackupExpiry(past, v.expiry().hotToStandardMicros())));
      sweepsPass();
      assertThrows(NotFoundException.class, () -> admin.getBackup(CLUSTER, "soon"));
      assertEquals(List.of("later"), admin.listBackups(CLUSTER), "only the expired backup goes");
    }
  }

  @Test
  void badRequestsGetTheStatusesCloudBigtableGives() throws Exception {
    try (TabulaNode node = TabulaNode.start(dir, 0, 0);
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      admin.createTable(CreateTableRequest.of("t").addFamily("cf"));
      data.mutateRow(RowMutation.create(TableId.of("t"), "r").setCell("cf", "q", 1000, "v"));
      Instant week = Instant.now().plus(7, ChronoUnit.DAYS);
      assertThrows(NotFoundException.class, () -> admin.createBackup(CreateBackupRequest.of(CLUSTER, "b")
          .setSourceTableId("missing").setExpireTime(week)));
      InvalidArgumentException past = assertThrows(InvalidArgumentException.class, () -> admin.createBackup(
          CreateBackupRequest.of(CLUSTER, "b").setSourceTableId("t").setExpireTime(Instant.now().minusSeconds(60))));
      assertTrue(past.getMessage().contains("backup.expire_time"), past.getMessage());
      assertThrows(InvalidArgumentException.class, () -> admin.createBackup(CreateBackupRequest.of(CLUSTER, "b")
          .setSourceTableId("t").setExpireTime(Instant.now().plus(91, ChronoUnit.DAYS))));
      assertThrows(NotFoundException.class, () -> admin.createBackup(CreateBackupRequest.of("elsewhere", "b")
          .setSourceTableId("t").setExpireTime(week)));
      assertThrows(InvalidArgumentException.class, () -> admin.createBackup(CreateBackupRequest.of(CLUSTER,
          "no/slashes").setSourceTableId("t").setExpireTime(week)));
      admin.createBackup(CreateBackupRequest.of(CLUSTER, "b").setSourceTableId("t").setExpireTime(week));
      assertThrows(AlreadyExistsException.class, () -> admin.createBackup(CreateBackupRequest.of(CLUSTER, "b")
          .setSourceTableId("t").setExpireTime(week)));
      assertThrows(AlreadyExistsException.class, () -> admin.restoreTable(RestoreTableRequest.of(CLUSTER, "b")
          .setTableId("t")));
      assertThrows(NotFoundException.class, () -> admin.restoreTable(RestoreTableRequest.of(CLUSTER, "nothing")
          .setTableId("t2")));
      assertThrows(InvalidArgumentException.class, () -> admin.updateBackup(UpdateBackupRequest.of(CLUSTER, "b")
          .setExpireTime(Instant.now().plusSeconds(60))));
      assertThrows(NotFoundException.class, () -> admin.deleteBackup(CLUSTER, "nothing"));
      // A backup whose file is gone (a disk lost it) is refused as damaged, naming the file.
      String named = io.tabula.persistence.backup.BackupManifestCodec.read(
          new io.tabula.persistence.storage.FileStorage(dir), "b").paths().iterator().next();
      Files.delete(dir.resolve(named));
      com.google.api.gax.rpc.DataLossException damaged = assertThrows(com.google.api.gax.rpc.DataLossException.class,
          () -> admin.restoreTable(RestoreTableRequest.of(CLUSTER, "b").setTableId("t3")));
      assertTrue(damaged.getMessage().contains(named), damaged.getMessage());
      assertTrue(Files.exists(dir.resolve("backups/b/MANIFEST")), "the backup is a manifest under the storage root");
    }
  }
}
