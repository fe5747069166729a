package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tabula.actors.master.Directory;
import io.tabula.cluster.conformance.ConformancePeer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nodes share one data directory exactly when they are one cluster. A node that joins the
 * first shares its root, gets tablets of its own and serves every row through either node.
 * A node that does not join (a second cluster on the same root) cannot take the master lease
 * (renewed by the first node's master in the data directory), so it never sees a master and
 * gives up starting, while the first keeps serving: two masters would each believe they own
 * the directory.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MasterLeaseTest {
  @TempDir
  Path dir;

  private Config node(String name, int clusterPort, List<String> join) {
    return ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(), "tabula.node.grpc-port", 0,
        "tabula.node.http-port", 0, "tabula.node.name", name, "tabula.node.cluster-port", clusterPort,
        "tabula.node.join", join, "tabula.node.master-start-timeout", "20s"));
  }

  @Test
  void aNodeThatJoinsSharesTheDataDirectoryAndServesEveryRow() throws Exception {
    int seed = NodeProcess.freePort();
    try (TabulaNode first = TabulaNode.start(node("n1", seed, List.of()));
        TabulaNode second = TabulaNode.start(node("n2", 0, List.of("127.0.0.1:" + seed)))) {
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(
          ConformancePeer.adminSettings(second.grpcPort()))) {
        admin.createTable(CreateTableRequest.of("t").addFamily("f").addSplit(com.google.protobuf.ByteString
            .copyFromUtf8("m")));
      }
      List<String> rows = new ArrayList<>();
      for (char c = 'a'; c <= 'z'; c++) {
        rows.add(c + "-row");
      }
      try (BigtableDataClient one = BigtableDataClient.create(ConformancePeer.dataSettings(first.grpcPort()));
          BigtableDataClient two = BigtableDataClient.create(ConformancePeer.dataSettings(second.grpcPort()))) {
        for (int i = 0; i < rows.size(); i++) {
          (i % 2 == 0 ? one : two).mutateRow(RowMutation.create(TableId.of("t"), rows.get(i)).setCell("f", "q",
              "v" + i));
        }
        for (BigtableDataClient c : List.of(one, two)) {
          List<String> read = new ArrayList<>();
          for (Row r : c.readRows(Query.create(TableId.of("t")))) {
            read.add(r.getKey().toStringUtf8());
          }
          assertEquals(rows, read, "every row through either node");
        }
      }
      Directory d = first.directory();
      Set<String> owners = new TreeSet<>();
      d.tabletsOf("t").forEach(t -> owners.add(d.ownerOf(t.id())));
      assertEquals(Set.of("n1", "n2"), owners, "the table's two tablets are spread over both nodes");
    }
  }

  @Test
  void aNodeOfAnotherClusterOnTheSameDataDirectoryDoesNotBecomeMaster() throws Exception {
    try (TabulaNode first = TabulaNode.start(dir, 0, 0)) {
      IllegalStateException refused = assertThrows(IllegalStateException.class, () -> TabulaNode.start(
          ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(), "tabula.node.grpc-port", 0,
              "tabula.node.http-port", 0, "tabula.node.name", "node2", "tabula.node.master-start-timeout", "5s"))));
      assertTrue(refused.getMessage().contains("master lease"), refused.getMessage());
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(
          ConformancePeer.adminSettings(first.grpcPort()))) {
        assertEquals(List.of(), admin.listTables(), "the first node still serves");
      }
    }
  }
}
