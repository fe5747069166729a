package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.cluster.TabulaNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
}
