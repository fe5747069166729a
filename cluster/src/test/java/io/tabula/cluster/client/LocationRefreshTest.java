package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.typesafe.config.ConfigFactory;
import io.tabula.client.Query;
import io.tabula.client.RetrySettings;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.cluster.TabulaNode;
import io.tabula.protocol.locations.LocateRequest;
import io.tabula.protocol.locations.LocationsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.grpc.GrpcClientSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's location cache (paper §5.1) on a table that splits under it: the client
 * caches the table's one tablet, the tablet splits, and the next single-row requests name a
 * tablet that no longer exists. The node answers each with a stale route, the client drops
 * the entry, looks the row up again and succeeds. With a 3 s deadline per operation, a
 * client that kept the stale entry would retry the same route until its deadline and fail.
 * The test also runs the client inside an actor system of its own making (passed in).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class LocationRefreshTest {
  private static final int ROWS = 2000;

  @TempDir
  Path dir;

  private static String key(int i) {
    return String.format("row%05d", i);
  }

  @Test
  void requestsNamingASplitTabletAreRoutedAgainAfterAStaleRouteAnswer() throws Exception {
    ActorSystem system = ActorSystem.create("app");
    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of(
            "tabula.node.data-dir", dir.toString(),
            "tabula.node.grpc-port", 0,
            "tabula.node.http-port", 0,
            "tabula.node.memtable-bytes", 16 * 1024,
            "tabula.tablet.split-bytes", 96 * 1024,
            "tabula.tablet.check-interval", "100ms")));
        TabulaClient client = TabulaClient.builder().endpoint("127.0.0.1:" + node.grpcPort()).actorSystem(system)
            .retry(RetrySettings.DEFAULT.withTotalTimeout(Duration.ofSeconds(3))).build()) {
      client.admin().createTable("t", "f").toCompletableFuture().join();
      ByteString value = ByteString.copyFrom(new byte[300]);
      client.apply("t", RowMutation.create(key(0)).setCell("f", ByteString.copyFromUtf8("q"), 1000, value))
          .toCompletableFuture().join();
      List<RowMutation> rest = new java.util.ArrayList<>();
      for (int i = 1; i < ROWS; i++) {
        rest.add(RowMutation.create(key(i)).setCell("f", ByteString.copyFromUtf8("q"), 1000, value));
      }
      assertTrue(client.applyBatch("t", rest).toCompletableFuture().join().stream().allMatch(r -> r.ok()));

      LocationsClient locations = LocationsClient.create(GrpcClientSettings
          .connectToServiceAt("127.0.0.1", node.grpcPort(), system).withTls(false), system);
      int tablets = 1;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (tablets < 2 && System.nanoTime() < deadline) {
        Thread.sleep(200);
        tablets = locations.locate(LocateRequest.newBuilder().setTableName(client.tableName("t")).setPrefetch(100)
            .build()).toCompletableFuture().get(5, TimeUnit.SECONDS).getTabletsCount();
      }
      assertTrue(tablets >= 2, "the table split, got " + tablets + " tablet");
      locations.close();

      // The client still holds the original tablet [, ) for the table: every request below names it first.
      for (int i = 0; i < ROWS; i += 97) {
        client.apply("t", RowMutation.create(key(i)).setCell("f", "q", 2000, "again")).toCompletableFuture().join();
        Row r = client.readRow("t", key(i)).toCompletableFuture().join().orElseThrow();
        assertEquals("again", r.latest("f", "q").orElseThrow().valueUtf8(), key(i));
      }
      assertEquals(ROWS, client.readRows(Query.table("t").versions(1)).toCompletableFuture().join().size());
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
