package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.rpc.AlreadyExistsException;
import com.google.api.gax.rpc.DataLossException;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.Backup;
import com.google.cloud.bigtable.admin.v2.models.CopyBackupRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateBackupRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.RestoreTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import io.tabula.cluster.TabulaNode;
import io.tabula.persistence.backup.BackupManifest;
import io.tabula.persistence.backup.BackupManifestCodec;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.ForwardingWritableFile;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.threeten.bp.Instant;
import org.threeten.bp.temporal.ChronoUnit;

/**
 * CopyBackup through the official Java admin client (docs/backups.md, "Copying"): within one
 * storage root a copy names the same files and outlives its source, deleted and swept; from
 * another instance's root (tabula.backup.copy-sources) it copies every file, checked by CRC32C,
 * and restores after that root is gone altogether; a copy whose bytes do not read back as the
 * source's is DATA_LOSS and leaves no backup and no copied file; bad requests name their field.
 */
class BackupCopyTest {
  private static final String CLUSTER = "tabula";
  private static final java.time.Duration GRACE = java.time.Duration.ofSeconds(4);

  @TempDir
  Path dir;

  private TabulaNode node(Path data, Map<String, Object> more) {
    Map<String, Object> settings = new HashMap<>(Map.of("tabula.node.data-dir", data.toString(),
        "tabula.node.grpc-port", 0, "tabula.node.http-port", 0, "tabula.master.sweep-files-every", "500ms",
        "tabula.master.sweep-files-grace", GRACE.toMillis() + "ms"));
    settings.putAll(more);
    return TabulaNode.start(com.typesafe.config.ConfigFactory.parseMap(settings));
  }

  private static void sweepsPass() throws InterruptedException {
    Thread.sleep(GRACE.multipliedBy(2).plusSeconds(2).toMillis());
  }

  private static List<String> rows(BigtableDataClient data, String table) {
    List<String> out = new ArrayList<>();
    for (Row r : data.readRows(Query.create(TableId.of(table)))) {
      out.add(r.getKey().toStringUtf8() + "=" + r.getCells().get(0).getValue().size() + ":"
          + r.getCells().get(0).getValue().substring(0, 8).toStringUtf8());
    }
    return out;
  }

  /** A table of two tablets and {@code n} rows of {@code valueBytes} random bytes each, backed up as {@code backup}. */
  private static List<String> tableAndBackup(BigtableTableAdminClient admin, BigtableDataClient data, String table,
      String backup, int n, int valueBytes) {
    admin.createTable(CreateTableRequest.of(table).addFamily("cf").addSplit(ByteString.copyFromUtf8("m")));
    Random random = new Random(11);
    for (int from = 0; from < n; from += 50) {
      BulkMutation batch = BulkMutation.create(TableId.of(table));
      for (int i = from; i < Math.min(n, from + 50); i++) {
        byte[] v = new byte[valueBytes];
        random.nextBytes(v);
        System.arraycopy(String.format("v%07d", i).getBytes(), 0, v, 0, 8);
        batch.add((i % 2 == 0 ? "a" : "x") + String.format("%05d", i), Mutation.create().setCell("cf",
            ByteString.copyFromUtf8("q"), 1000, ByteString.copyFrom(v)));
      }
      data.bulkMutateRows(batch);
    }
    List<String> expected = rows(data, table);
    admin.createBackup(CreateBackupRequest.of(CLUSTER, backup).setSourceTableId(table)
        .setExpireTime(Instant.now().plus(7, ChronoUnit.DAYS)));
    return expected;
  }

  @Test
  void aCopyInOneRootNamesTheSameFilesAndOutlivesItsSourceDeletedAndSwept() throws Exception {
    try (TabulaNode node = node(dir, Map.of());
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      List<String> expected = tableAndBackup(admin, data, "orders", "nightly", 200, 100);
      Instant expire = Instant.now().plus(10, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS);
      Backup copy = admin.copyBackup(CopyBackupRequest.of(CLUSTER, "nightly").setDestination(CLUSTER, "kept")
          .setExpireTime(expire));
      Backup source = admin.getBackup(CLUSTER, "nightly");
      assertEquals("kept", copy.getId());
      assertEquals(expire, copy.getExpireTime());
      assertEquals(source.getSizeBytes(), copy.getSizeBytes());
      assertEquals(source.getStartTime(), copy.getStartTime(), "a copy is of its source's moment");
      assertEquals("nightly", admin.getBackup(CLUSTER, "kept").getSourceBackupId(), "GetBackup names a copy's source");
      com.google.longrunning.OperationsClient operations = admin.getBaseClient().getOperationsClient();
      String kept = "projects/" + ConformancePeer.PROJECT + "/instances/" + ConformancePeer.INSTANCE + "/clusters/"
          + CLUSTER + "/backups/kept";
      assertEquals("", admin.getBaseClient().getBackup(kept.replace("/kept", "/nightly")).getSourceBackup(),
          "a backup made from its table has no source backup");
      com.google.longrunning.Operation op = operations.getOperation(kept + "/operations/copy");
      assertTrue(op.getMetadata().is(com.google.bigtable.admin.v2.CopyBackupMetadata.class), op.toString());
      assertTrue(op.getMetadata().unpack(com.google.bigtable.admin.v2.CopyBackupMetadata.class).getSourceBackupInfo()
          .getBackup().endsWith("/backups/nightly"), op.toString());
      assertThrows(NotFoundException.class, () -> operations.getOperation(kept + "/operations/create"),
          "a copy was not made by CreateBackup");
      FileStorage storage = new FileStorage(dir);
      assertEquals(BackupManifestCodec.read(storage, "nightly").paths(), BackupManifestCodec.read(storage, "kept")
          .paths(), "no file is copied within a root");

      assertThrows(AlreadyExistsException.class, () -> admin.copyBackup(CopyBackupRequest.of(CLUSTER, "nightly")
          .setDestination(CLUSTER, "kept").setExpireTime(expire)));
      assertThrows(NotFoundException.class, () -> admin.copyBackup(CopyBackupRequest.of(CLUSTER, "nothing")
          .setDestination(CLUSTER, "k2").setExpireTime(expire)));
      InvalidArgumentException past = assertThrows(InvalidArgumentException.class, () -> admin.copyBackup(
          CopyBackupRequest.of(CLUSTER, "nightly").setDestination(CLUSTER, "k2").setExpireTime(Instant.now()
              .minusSeconds(60))));
      assertTrue(past.getMessage().contains("expire_time"), past.getMessage());
      assertThrows(InvalidArgumentException.class, () -> admin.copyBackup(CopyBackupRequest.of(CLUSTER, "nightly")
          .setDestination(CLUSTER, "k2").setExpireTime(Instant.now().plus(91, ChronoUnit.DAYS))));
      NotFoundException elsewhere = assertThrows(NotFoundException.class, () -> admin.copyBackup(CopyBackupRequest
          .of(CLUSTER, "nightly").setSourceInstance("unknown-instance").setDestination(CLUSTER, "k2")
          .setExpireTime(expire)));
      assertTrue(elsewhere.getMessage().contains("source_backup"), elsewhere.getMessage());
      assertThrows(InvalidArgumentException.class, () -> admin.copyBackup(CopyBackupRequest.of(CLUSTER, "nightly")
          .setDestination(CLUSTER, "no/slash").setExpireTime(expire)));
      assertEquals(List.of("kept", "nightly"), admin.listBackups(CLUSTER).stream().sorted().toList(),
          "the refused copies left nothing");

      admin.deleteBackup(CLUSTER, "nightly");
      admin.deleteTable("orders");
      sweepsPass();
      try (Stream<Path> left = Files.walk(dir.resolve("tables/orders"))) {
        assertTrue(left.noneMatch(p -> p.getFileName().toString().startsWith("MANIFEST")), "the sweeps ran");
      }
      admin.restoreTable(RestoreTableRequest.of(CLUSTER, "kept").setTableId("orders-back"));
      assertEquals(expected, rows(data, "orders-back"), "the copy restores without its source");
    }
  }

  @Test
  void aCopyFromAnotherRootIsCheckedAndRestoresAfterThatRootIsGone() throws Exception {
    Path other = dir.resolve("other");
    List<String> expected;
    try (TabulaNode source = node(other, Map.of());
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(
            source.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(source.grpcPort()))) {
      // About 24 MB: files of several chunks each, so the copy streams.
      expected = tableAndBackup(admin, data, "events", "weekly", 3000, 8000);
    }
    BackupManifest m = BackupManifestCodec.read(new FileStorage(other), "weekly");
    Path here = dir.resolve("here");
    try (TabulaNode node = node(here, Map.of("tabula.backup.copy-sources.elsewhere", other.toUri().toString()));
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      Instant expire = Instant.now().plus(10, ChronoUnit.DAYS);
      assertThrows(NotFoundException.class, () -> admin.copyBackup(CopyBackupRequest.of(CLUSTER, "missing")
          .setSourceInstance("elsewhere").setDestination(CLUSTER, "w").setExpireTime(expire)));
      long began = System.nanoTime();
      Backup copy = admin.copyBackup(CopyBackupRequest.of(CLUSTER, "weekly").setSourceInstance("elsewhere")
          .setDestination(CLUSTER, "weekly-copy").setExpireTime(expire));
      double seconds = (System.nanoTime() - began) / 1e9;
      System.out.printf("copied %d bytes in %d files between roots in %.2f s (%.0f MB/s)%n", m.bytes(),
          m.paths().size(), seconds, m.bytes() / 1e6 / seconds);
      assertEquals(m.bytes(), copy.getSizeBytes());
      BackupManifest copied = BackupManifestCodec.read(new FileStorage(here), "weekly-copy");
      assertEquals(m.paths().size(), copied.paths().size());
      for (String p : copied.paths()) {
        assertTrue(p.matches("tables/events/copy-[0-9a-f]{32}/[0-9]{6}\\.sst"), p);
        assertTrue(Files.exists(here.resolve(p)), p);
      }
      assertThrows(AlreadyExistsException.class, () -> admin.copyBackup(CopyBackupRequest.of(CLUSTER, "weekly")
          .setSourceInstance("elsewhere").setDestination(CLUSTER, "weekly-copy").setExpireTime(expire)));

      deleteTree(other);
      sweepsPass();
      admin.restoreTable(RestoreTableRequest.of(CLUSTER, "weekly-copy").setTableId("events"));
      assertEquals(expected, rows(data, "events"), "the copy restores with its source's root gone");
      admin.deleteBackup(CLUSTER, "weekly-copy");
      sweepsPass();
      assertEquals(expected, rows(data, "events"), "the restored table keeps the copied files it names");
    }
  }

  @Test
  void aCopyWhoseBytesDoNotReadBackIsDataLossAndLeavesNothing() throws Exception {
    Path other = dir.resolve("other");
    try (TabulaNode source = node(other, Map.of());
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(
            source.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(source.grpcPort()))) {
      tableAndBackup(admin, data, "t", "b", 400, 1000);
    }
    Path here = dir.resolve("here");
    FlippingStorage.flip = true;
    try (TabulaNode node = node(here, Map.of("tabula.backup.copy-sources.elsewhere", other.toUri().toString(),
        "tabula.node.storage-class", FlippingStorage.class.getName()));
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(
            node.grpcPort()))) {
      Instant expire = Instant.now().plus(10, ChronoUnit.DAYS);
      DataLossException lost = assertThrows(DataLossException.class, () -> admin.copyBackup(CopyBackupRequest.of(
          CLUSTER, "b").setSourceInstance("elsewhere").setDestination(CLUSTER, "c").setExpireTime(expire)));
      assertTrue(lost.getMessage().contains("CRC32C"), lost.getMessage());
      assertFalse(Files.exists(here.resolve("backups/c")), "no half-made backup");
      assertEquals(List.of(), copiedFiles(here), "the copied files were deleted");
      assertThrows(NotFoundException.class, () -> admin.getBackup(CLUSTER, "c"));
      FlippingStorage.flip = false;
      assertEquals("c", admin.copyBackup(CopyBackupRequest.of(CLUSTER, "b").setSourceInstance("elsewhere")
          .setDestination(CLUSTER, "c").setExpireTime(expire)).getId(), "the same copy, on a disk that keeps bytes");
      assertFalse(copiedFiles(here).isEmpty());
    } finally {
      FlippingStorage.flip = false;
    }
  }

  private static List<Path> copiedFiles(Path root) throws IOException {
    if (!Files.exists(root.resolve("tables"))) {
      return List.of();
    }
    try (Stream<Path> all = Files.walk(root.resolve("tables"))) {
      return all.filter(p -> p.getParent().getFileName().toString().startsWith("copy-")).toList();
    }
  }

  private static void deleteTree(Path p) throws IOException {
    try (Stream<Path> all = Files.walk(p)) {
      for (Path f : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
  }

  /** A disk that, while {@link #flip} is set, flips a bit in what is written to a backup copy's files. */
  public static final class FlippingStorage extends ForwardingStorage {
    static volatile boolean flip;

    public FlippingStorage(Path root) throws IOException {
      super(new FileStorage(root));
    }

    @Override
    public WritableFile create(String path) throws IOException {
      WritableFile f = delegate.create(path);
      if (!path.contains("/copy-")) {
        return f;
      }
      return new ForwardingWritableFile(f) {
        @Override
        public void append(byte[] b, int off, int len) throws IOException {
          byte[] bytes = java.util.Arrays.copyOfRange(b, off, off + len);
          if (flip && len > 0) {
            bytes[len - 1] ^= 0x40;
          }
          super.append(bytes, 0, len);
        }
      };
    }
  }
}
