package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.client.TabulaException;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClientSmokeTest {
  @TempDir
  Path dir;

  @Test
  void writesReadsAndScans() {
    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(),
        "tabula.node.grpc-port", 0, "tabula.node.http-port", 0)));
        TabulaClient client = TabulaClient.connect("127.0.0.1:" + node.grpcPort())) {
      client.admin().createTable("t", "f").toCompletableFuture().join();
      client.apply("t", RowMutation.create("a").setCell("f", "q", 5000, "v1")).toCompletableFuture().join();
      Row r = client.readRow("t", "a").toCompletableFuture().join().orElseThrow();
      assertEquals("v1", r.cells().get(0).valueUtf8());
      for (int i = 0; i < 50; i++) {
        client.apply("t", RowMutation.create("k" + i).setCell("f", "q", "x")).toCompletableFuture().join();
      }
      List<Row> rows = client.readRows(Query.table("t").prefix("k")).toCompletableFuture().join();
      assertEquals(50, rows.size());
      assertTrue(client.admin().listTables().toCompletableFuture().join().contains("t"));
    }
  }

  /** A scan whose retries run out fails; it once completed empty, as if the table had no rows. */
  @Test
  void scanOfAnUnreachableNodeFails() throws IOException {
    int closed;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
    try (TabulaClient client = TabulaClient.builder().endpoint("127.0.0.1:" + closed).deadline(Duration.ofSeconds(1))
        .build()) {
      CompletionException e = assertThrows(CompletionException.class,
          () -> client.readRows(Query.table("t")).toCompletableFuture().join());
      TabulaException cause = assertInstanceOf(TabulaException.class, e.getCause());
      assertEquals(Status.Code.UNAVAILABLE, cause.code());
    }
  }
}
