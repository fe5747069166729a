package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.BigtableClient;
import com.google.bigtable.v2.CheckAndMutateRowRequest;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadModifyWriteRowRequest;
import com.google.bigtable.v2.ReadModifyWriteRule;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutationEntry;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import com.typesafe.config.ConfigFactory;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tabula.cluster.conformance.ConformancePeer;
import io.tabula.protocol.locations.LocateRequest;
import io.tabula.protocol.locations.LocateResponse;
import io.tabula.protocol.locations.LocationsClient;
import io.tabula.protocol.locations.TabletLocation;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.grpc.GrpcClientSettings;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tabula's Locations service and stale-route answers on one in-JVM node, through the Pekko
 * gRPC clients generated from the protocol module: Locate answers the row's tablet and the
 * ones after it with this node's endpoint, and a single-row request naming a tablet that
 * does not hold its row (the header {@code tabula-tablet}) fails with FAILED_PRECONDITION and
 * the trailer {@code tabula-stale-route: 1} without being applied.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class LocationsTest {
  private static final String INSTANCE = "projects/p/instances/i";
  private static final Metadata.Key<String> STALE_TRAILER =
      Metadata.Key.of("tabula-stale-route", Metadata.ASCII_STRING_MARSHALLER);

  @TempDir
  static Path dir;

  private static TabulaNode node;
  private static LocationsClient locations;
  private static BigtableClient bigtable;
  private static BigtableDataClient data;
  private static BigtableTableAdminClient admin;

  @BeforeAll
  static void start() throws Exception {
    // A tiny split threshold: the table "grown" splits; the others stay far below it.
    node = TabulaNode.start(ConfigFactory.parseMap(Map.of(
        "tabula.node.data-dir", dir.toString(),
        "tabula.node.grpc-port", 0,
        "tabula.node.http-port", 0,
        "tabula.node.memtable-bytes", 16 * 1024,
        "tabula.tablet.split-bytes", 96 * 1024,
        "tabula.tablet.check-interval", "100ms")));
    GrpcClientSettings settings = GrpcClientSettings.connectToServiceAt("127.0.0.1", node.grpcPort(), node.system())
        .withTls(false);
    locations = LocationsClient.create(settings, node.system());
    bigtable = BigtableClient.create(settings, node.system());
    data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()));
    admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
  }

  @AfterAll
  static void stop() throws Exception {
    if (locations != null) {
      locations.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    if (bigtable != null) {
      bigtable.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    if (data != null) {
      data.close();
    }
    if (admin != null) {
      admin.close();
    }
    if (node != null) {
      node.close();
    }
  }

  // ---- Locate

  @Test
  void aFreshTableIsOneTabletServedHere() throws Exception {
    admin.createTable(CreateTableRequest.of("fresh").addFamily("f"));
    for (int prefetch : new int[] {0, 100}) {
      LocateResponse r = locate("fresh", "any-row", prefetch);
      assertEquals(1, r.getTabletsCount(), r.toString());
      TabletLocation t = r.getTablets(0);
      assertEquals(ByteString.EMPTY, t.getStartKey());
      assertEquals(ByteString.EMPTY, t.getEndKey());
      assertEquals("127.0.0.1:" + node.grpcPort(), t.getEndpoint());
      assertFalse(t.getTabletId().isEmpty(), r.toString());
      assertTrue(r.getDirectoryVersion() > 0, r.toString());
    }
    // The directory's version moves on with any change anywhere (another test's table, a tablet's report),
    // so only the tablets are compared.
    assertEquals(locate("fresh", "", 0).getTabletsList(), locate("fresh", "zzz", 0).getTabletsList(),
        "every row is in the one tablet");
  }

  @Test
  void badArgumentsAreRefusedNamingTheField() {
    StatusRuntimeException name = failure(locations.locate(LocateRequest.newBuilder()
        .setTableName("tables/no-instance").build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, name.getStatus().getCode());
    assertTrue(name.getStatus().getDescription().startsWith("table_name: "), name.getStatus().toString());
    StatusRuntimeException badId = failure(locations.locate(LocateRequest.newBuilder()
        .setTableName(INSTANCE + "/tables/no spaces").build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, badId.getStatus().getCode());
    assertTrue(badId.getStatus().getDescription().startsWith("table_name: "), badId.getStatus().toString());
    for (int prefetch : new int[] {-1, 101}) {
      StatusRuntimeException e = failure(locations.locate(request("fresh", "a", prefetch)));
      assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), "prefetch " + prefetch);
      assertTrue(e.getStatus().getDescription().startsWith("prefetch: "), e.getStatus().toString());
    }
  }

  @Test
  void anUnknownTableIsNotFound() {
    StatusRuntimeException e = failure(locations.locate(request("no_such_table", "a", 0)));
    assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), e.getStatus().toString());
  }

  @Test
  void prefetchAnswersTheFollowingTabletsInRowOrder() throws Exception {
    admin.createTable(CreateTableRequest.of("presplit").addFamily("f").addSplit(ByteString.copyFromUtf8("g"))
        .addSplit(ByteString.copyFromUtf8("n")).addSplit(ByteString.copyFromUtf8("t")));
    List<TabletLocation> all = locate("presplit", "", 100).getTabletsList();
    assertEquals(List.of("", "g", "n", "t"), all.stream().map(t -> t.getStartKey().toStringUtf8()).toList());
    assertChained(all);
    assertEquals(all.subList(1, 3), locate("presplit", "h", 1).getTabletsList());
    assertEquals(all.subList(2, 4), locate("presplit", "n", 1).getTabletsList(), "a tablet's start row is its own");
    assertEquals(all.subList(1, 2), locate("presplit", "mzzz", 0).getTabletsList(),
        "a row just below a split point is in the tablet before it");
    assertEquals(all.subList(2, 4), locate("presplit", "p", 100).getTabletsList(), "no tablet past the last");
  }

  @Test
  void afterSplitsLocateFollowsTheTabletsAndTheOldIdIsAStaleRoute() throws Exception {
    admin.createTable(CreateTableRequest.of("grown").addFamily("f"));
    String original = locate("grown", "", 0).getTablets(0).getTabletId();
    byte[] value = new byte[300];
    for (int batch = 0; batch < 30; batch++) {
      BulkMutation bulk = BulkMutation.create(TableId.of("grown"));
      for (int j = 0; j < 100; j++) {
        bulk.add(RowMutationEntry.create(String.format("row%05d", batch * 100 + j))
            .setCell("f", ByteString.copyFromUtf8("q"), 1000, ByteString.copyFrom(value)));
      }
      data.bulkMutateRows(bulk);
    }
    List<TabletLocation> all = settledTablets("grown");
    assertTrue(all.size() >= 3, "the table split into at least 3 tablets: " + all);
    assertChained(all);
    for (int i = 0; i + 2 < all.size(); i++) {
      TabletLocation t = all.get(i);
      // The first row of each tablet, and a row inside it, find it and the two after it.
      assertEquals(all.subList(i, i + 3), locate("grown", t.getStartKey().toStringUtf8(), 2).getTabletsList());
      assertEquals(all.subList(i, i + 3),
          locate("grown", t.getStartKey().toStringUtf8() + "\u0000", 2).getTabletsList());
    }

    String row = "row00042x";
    StatusRuntimeException e = failure(bigtable.mutateRow().addHeader("tabula-tablet", original)
        .invoke(setCell("grown", row)));
    assertStaleRoute(e, original);
    assertNull(data.readRow(TableId.of("grown"), row), "nothing was written on a stale route");
    String holder = locate("grown", row, 0).getTablets(0).getTabletId();
    bigtable.mutateRow().addHeader("tabula-tablet", holder).invoke(setCell("grown", row))
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals("v", data.readRow(TableId.of("grown"), row).getCells("f", "q").get(0).getValue().toStringUtf8());
  }

  // ---- stale routes

  @Test
  void aSingleRowWriteNamingTheWrongTabletIsRefusedAndNotApplied() throws Exception {
    admin.createTable(CreateTableRequest.of("routes").addFamily("f").addSplit(ByteString.copyFromUtf8("m")));
    List<TabletLocation> all = locate("routes", "", 1).getTabletsList();
    String low = all.get(0).getTabletId();
    String high = all.get(1).getTabletId();

    // A tablet of the table that does not hold the row, and an id no tablet has.
    for (String wrong : List.of(high, "no-such-tablet")) {
      assertStaleRoute(failure(bigtable.mutateRow().addHeader("tabula-tablet", wrong)
          .invoke(setCell("routes", "a"))), wrong);
      assertStaleRoute(failure(bigtable.checkAndMutateRow().addHeader("tabula-tablet", wrong)
          .invoke(CheckAndMutateRowRequest.newBuilder().setTableName(INSTANCE + "/tables/routes")
              .setRowKey(ByteString.copyFromUtf8("a")).addFalseMutations(cell("v")).build())), wrong);
      assertStaleRoute(failure(bigtable.readModifyWriteRow().addHeader("tabula-tablet", wrong)
          .invoke(ReadModifyWriteRowRequest.newBuilder().setTableName(INSTANCE + "/tables/routes")
              .setRowKey(ByteString.copyFromUtf8("a")).addRules(ReadModifyWriteRule.newBuilder()
                  .setFamilyName("f").setColumnQualifier(ByteString.copyFromUtf8("q"))
                  .setAppendValue(ByteString.copyFromUtf8("v"))).build())), wrong);
    }
    assertNull(data.readRow(TableId.of("routes"), "a"), "no refused request was applied");

    bigtable.mutateRow().addHeader("tabula-tablet", low).invoke(setCell("routes", "a"))
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
    Row written = data.readRow(TableId.of("routes"), "a");
    assertEquals("v", written.getCells("f", "q").get(0).getValue().toStringUtf8());
    bigtable.mutateRow().invoke(setCell("routes", "z")).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(1, data.readRow(TableId.of("routes"), "z").getCells("f", "q").size(), "no header: not checked");
  }

  @Test
  void aReadOfOneRowNamingTheWrongTabletIsRefusedAndOtherReadsAreNotChecked() throws Exception {
    admin.createTable(CreateTableRequest.of("reads").addFamily("f").addSplit(ByteString.copyFromUtf8("m")));
    bigtable.mutateRow().invoke(setCell("reads", "a")).toCompletableFuture().get(10, TimeUnit.SECONDS);
    List<TabletLocation> all = locate("reads", "", 1).getTabletsList();
    String high = all.get(1).getTabletId();

    ReadRowsRequest one = ReadRowsRequest.newBuilder().setTableName(INSTANCE + "/tables/reads")
        .setRows(RowSet.newBuilder().addRowKeys(ByteString.copyFromUtf8("a"))).build();
    StatusRuntimeException e = failure(bigtable.readRows().addHeader("tabula-tablet", high).invoke(one)
        .runWith(Sink.seq(), node.system()));
    assertStaleRoute(e, high);
    assertEquals(1, readRows(bigtable.readRows().addHeader("tabula-tablet", all.get(0).getTabletId())
        .invoke(one).runWith(Sink.seq(), node.system())).size(), "the right tablet: the row is read");

    ReadRowsRequest range = ReadRowsRequest.newBuilder().setTableName(INSTANCE + "/tables/reads")
        .setRows(RowSet.newBuilder().addRowRanges(RowRange.newBuilder()
            .setStartKeyClosed(ByteString.copyFromUtf8("a")).setEndKeyClosed(ByteString.copyFromUtf8("a")))).build();
    assertEquals(1, readRows(bigtable.readRows().addHeader("tabula-tablet", high).invoke(range)
        .runWith(Sink.seq(), node.system())).size(), "a range names no single tablet and is not checked");
  }

  @Test
  void aStaleRouteToAnUnknownTableIsNotFound() {
    StatusRuntimeException e = failure(bigtable.mutateRow().addHeader("tabula-tablet", "t1")
        .invoke(setCell("no_such_table", "a")));
    assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), e.getStatus().toString());
  }

  // ---- helpers

  private static LocateRequest request(String table, String row, int prefetch) {
    return LocateRequest.newBuilder().setTableName(INSTANCE + "/tables/" + table)
        .setRowKey(ByteString.copyFromUtf8(row)).setPrefetch(prefetch).build();
  }

  private static LocateResponse locate(String table, String row, int prefetch) throws Exception {
    return locations.locate(request(table, row, prefetch)).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** The table's tablets once splits have stopped: the same ids in two answers a second apart. */
  private static List<TabletLocation> settledTablets(String table) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    List<TabletLocation> before = locate(table, "", 100).getTabletsList();
    while (true) {
      Thread.sleep(1000);
      List<TabletLocation> now = locate(table, "", 100).getTabletsList();
      if ((now.size() >= 3 && now.equals(before)) || System.nanoTime() > deadline) {
        return now;
      }
      before = now;
    }
  }

  /** From the first row to the end of the table, each tablet starting where the one before ends. */
  private static void assertChained(List<TabletLocation> tablets) {
    assertEquals(ByteString.EMPTY, tablets.get(0).getStartKey(), tablets.toString());
    assertEquals(ByteString.EMPTY, tablets.get(tablets.size() - 1).getEndKey(), tablets.toString());
    for (int i = 1; i < tablets.size(); i++) {
      assertEquals(tablets.get(i - 1).getEndKey(), tablets.get(i).getStartKey(), tablets.toString());
      assertTrue(ByteString.unsignedLexicographicalComparator().compare(tablets.get(i - 1).getStartKey(),
          tablets.get(i).getStartKey()) < 0, tablets.toString());
    }
  }

  private static void assertStaleRoute(StatusRuntimeException e, String tabletId) {
    assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode(), e.getStatus().toString());
    String description = e.getStatus().getDescription();
    assertTrue(description.startsWith("stale route: ") && description.contains("'" + tabletId + "'"), description);
    assertEquals("1", e.getTrailers() == null ? null : e.getTrailers().get(STALE_TRAILER), "trailer of " + e);
  }

  /** The failure a call ends with, as the client sees it. */
  private static StatusRuntimeException failure(CompletionStage<?> call) {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> call.toCompletableFuture().get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof StatusRuntimeException, "failed with " + e.getCause());
    return (StatusRuntimeException) e.getCause();
  }

  private static List<ByteString> readRows(CompletionStage<List<ReadRowsResponse>> call) throws Exception {
    return call.toCompletableFuture().get(10, TimeUnit.SECONDS).stream()
        .flatMap(r -> r.getChunksList().stream()).filter(c -> !c.getRowKey().isEmpty())
        .map(c -> c.getRowKey()).toList();
  }

  private static Mutation cell(String value) {
    return Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName("f")
        .setColumnQualifier(ByteString.copyFromUtf8("q")).setTimestampMicros(1000)
        .setValue(ByteString.copyFromUtf8(value))).build();
  }

  private static MutateRowRequest setCell(String table, String row) {
    return MutateRowRequest.newBuilder().setTableName(INSTANCE + "/tables/" + table)
        .setRowKey(ByteString.copyFromUtf8(row)).addMutations(cell("v")).build();
  }
}
