package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.core.ApiFuture;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.bigtable.admin.v2.Backup;
import com.google.bigtable.admin.v2.ListBackupsRequest;
import com.google.bigtable.admin.v2.ListBackupsResponse;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CopyBackupRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateBackupRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.util.Timestamps;
import io.tabula.cluster.TabulaNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.threeten.bp.Instant;
import org.threeten.bp.temporal.ChronoUnit;

/**
 * ListBackups over 10,000 backups on one node's real files (docs/backups.md, "Listing"): the
 * backups are made through the API (two CreateBackups, then CopyBackups within the root, which
 * write an expiry and a manifest each and copy no data, 32 at a time), then listed page by page
 * with page sizes 1000, the default and 777, with and without a filter and order_by: every
 * backup appears exactly once, in order, and each page answers within {@link #PAGE_BOUND}. Bad
 * page tokens and page sizes are INVALID_ARGUMENT naming the field.
 */
class BackupListingAtScaleTest {
  private static final String CLUSTER = "tabula";
  private static final int BACKUPS = 10_000;
  /** What a page of a listing of 10,000 backups must answer within, on a shared two-core machine. */
  private static final long PAGE_BOUND = 2_000;

  @TempDir
  Path dir;

  @Test
  void tenThousandBackupsAreListedPageByPageEachOnceInOrder() throws Exception {
    try (TabulaNode node = TabulaNode.start(dir, 0, 0);
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      for (String t : List.of("t1", "t2")) {
        admin.createTable(CreateTableRequest.of(t).addFamily("cf"));
        data.mutateRow(RowMutation.create(TableId.of(t), "r").setCell("cf", "q", 1000, "v"));
      }
      Instant base = Instant.now().plus(7, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS);
      admin.createBackup(CreateBackupRequest.of(CLUSTER, "src-a").setSourceTableId("t1").setExpireTime(base
          .minusSeconds(10)));
      admin.createBackup(CreateBackupRequest.of(CLUSTER, "src-b").setSourceTableId("t2").setExpireTime(base
          .minusSeconds(20)));
      long began = System.nanoTime();
      Semaphore inFlight = new Semaphore(32);
      List<ApiFuture<com.google.cloud.bigtable.admin.v2.models.Backup>> copies = new ArrayList<>();
      for (int i = 0; i < BACKUPS - 2; i++) {
        inFlight.acquire();
        ApiFuture<com.google.cloud.bigtable.admin.v2.models.Backup> f = admin.copyBackupAsync(CopyBackupRequest.of(
            CLUSTER, i % 10 == 0 ? "src-b" : "src-a").setDestination(CLUSTER, String.format("b%05d", i))
            .setExpireTime(base.plusSeconds(i)));
        f.addListener(inFlight::release, Runnable::run);
        copies.add(f);
      }
      for (ApiFuture<?> f : copies) {
        f.get(60, TimeUnit.SECONDS);
      }
      System.out.printf("made %d backups through CopyBackup in %.1f s%n", BACKUPS - 2,
          (System.nanoTime() - began) / 1e9);

      String parent = "projects/" + ConformancePeer.PROJECT + "/instances/" + ConformancePeer.INSTANCE
          + "/clusters/" + CLUSTER;
      // Newest expiry first: b09997 ... b00000, then src-a, then src-b.
      List<Backup> byExpiry = listAll(admin, parent, 1000, "", "expire_time desc", BACKUPS);
      assertEquals(BACKUPS, byExpiry.size());
      assertEquals(BACKUPS, new HashSet<>(byExpiry.stream().map(Backup::getName).toList()).size(), "each once");
      for (int i = 1; i < byExpiry.size(); i++) {
        assertTrue(Timestamps.compare(byExpiry.get(i - 1).getExpireTime(), byExpiry.get(i).getExpireTime()) > 0,
            "expire_time desc at " + i);
      }
      assertTrue(byExpiry.get(0).getName().endsWith("/backups/b09997"), byExpiry.get(0).getName());
      assertTrue(byExpiry.get(BACKUPS - 1).getName().endsWith("/backups/src-b"));

      // The default page size (the server's maximum, 1000) and order (start_time desc, then name).
      List<Backup> byDefault = listAll(admin, parent, 0, "", "", BACKUPS);
      assertEquals(byExpiry.stream().map(Backup::getName).sorted().toList(),
          byDefault.stream().map(Backup::getName).sorted().toList());
      for (int i = 1; i < byDefault.size(); i++) {
        Backup a = byDefault.get(i - 1);
        Backup b = byDefault.get(i);
        int c = Timestamps.compare(a.getStartTime(), b.getStartTime());
        assertTrue(c > 0 || c == 0 && a.getName().compareTo(b.getName()) < 0, "start_time desc, name at " + i);
      }

      // A filter: the copies of src-b (every tenth) and src-b itself, by name ascending, 777 a page.
      List<Backup> ofT2 = listAll(admin, parent, 777, "source_table = t2", "name", 1001);
      assertEquals(1001, ofT2.size());
      Set<String> expected = new HashSet<>();
      for (int i = 0; i < BACKUPS - 2; i += 10) {
        expected.add(parent + "/backups/" + String.format("b%05d", i));
      }
      expected.add(parent + "/backups/src-b");
      assertEquals(expected, new HashSet<>(ofT2.stream().map(Backup::getName).toList()));
      assertEquals(ofT2.stream().map(Backup::getName).sorted().toList(), ofT2.stream().map(Backup::getName).toList());
      List<Backup> late = listAll(admin, parent, 1000, "expire_time >= \"" + base.plusSeconds(9000) + "\"", "", 998);
      assertEquals(998, late.size(), "b09000 to b09997");

      // Bad input: tokens that are not ours, a token of another query, a negative page size.
      ListBackupsResponse first = page(admin, ListBackupsRequest.newBuilder().setParent(parent).setPageSize(10)
          .build());
      for (String bad : List.of("nonsense", "AAAAAAAAAAAAAAAAAA", "%%%", "x".repeat(100), first.getNextPageToken()
          .substring(1))) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> page(admin,
            ListBackupsRequest.newBuilder().setParent(parent).setPageToken(bad).build()), bad);
        assertTrue(e.getMessage().contains("page_token"), e.getMessage());
      }
      InvalidArgumentException other = assertThrows(InvalidArgumentException.class, () -> page(admin,
          ListBackupsRequest.newBuilder().setParent(parent).setOrderBy("name").setPageToken(
              first.getNextPageToken()).build()));
      assertTrue(other.getMessage().contains("page_token"), other.getMessage());
      InvalidArgumentException negative = assertThrows(InvalidArgumentException.class, () -> page(admin,
          ListBackupsRequest.newBuilder().setParent(parent).setPageSize(-1).build()));
      assertTrue(negative.getMessage().contains("page_size"), negative.getMessage());
      assertEquals(1000, page(admin, ListBackupsRequest.newBuilder().setParent(parent).setPageSize(50_000).build())
          .getBackupsCount(), "a page size over the maximum is cut to it");

      // A change between listings is seen: a deleted backup is gone, an updated expiry is the new one.
      admin.deleteBackup(CLUSTER, "b00001");
      admin.updateBackup(com.google.cloud.bigtable.admin.v2.models.UpdateBackupRequest.of(CLUSTER, "b00002")
          .setExpireTime(base.plus(20, ChronoUnit.DAYS)));
      List<Backup> after = listAll(admin, parent, 1000, "", "expire_time desc", BACKUPS - 1);
      assertEquals(BACKUPS - 1, after.size());
      assertTrue(after.get(0).getName().endsWith("/backups/b00002"), after.get(0).getName());
      assertFalse(after.stream().anyMatch(b -> b.getName().endsWith("/backups/b00001")));
    }
  }

  private static ListBackupsResponse page(BigtableTableAdminClient admin, ListBackupsRequest r) {
    return admin.getBaseClient().listBackupsCallable().call(r);
  }

  /** Every page of a listing, each timed against {@link #PAGE_BOUND}; {@code expected} is how many it holds. */
  private static List<Backup> listAll(BigtableTableAdminClient admin, String parent, int pageSize, String filter,
      String orderBy, int expected) {
    List<Backup> out = new ArrayList<>();
    String token = "";
    List<Long> millis = new ArrayList<>();
    do {
      long began = System.nanoTime();
      ListBackupsResponse r = page(admin, ListBackupsRequest.newBuilder().setParent(parent).setPageSize(pageSize)
          .setFilter(filter).setOrderBy(orderBy).setPageToken(token).build());
      long took = (System.nanoTime() - began) / 1_000_000;
      millis.add(took);
      assertTrue(took < PAGE_BOUND, "a page took " + took + " ms");
      out.addAll(r.getBackupsList());
      token = r.getNextPageToken();
      assertTrue(millis.size() <= expected / Math.max(1, pageSize == 0 ? 1000 : pageSize) + 2, "too many pages");
    } while (!token.isEmpty());
    System.out.printf("listed %d backups (page size %d, filter '%s', order_by '%s'): %d pages, ms each %s%n",
        out.size(), pageSize, filter, orderBy, millis.size(), millis);
    return out;
  }
}
