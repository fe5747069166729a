package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import io.tabula.client.TabulaClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Scenario 1: three nodes on one storage root; a table created with initial splits has its
 * tablets spread over all three at once; rows written through every node, with the official
 * client (which talks to one node, so a row owned elsewhere is forwarded) and with the Tabula
 * client (which sends each row to its owner), read back whole and in order through every node.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class ThreeNodesTest {
  private static int count(BigtableDataClient c, Query q) {
    int n = 0;
    for (Row r : c.readRows(q)) {
      n++;
    }
    return n;
  }

  @Test
  void tabletsSpreadAndEveryNodeServesEveryRow() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      ClusterFixture.createTable(cluster.node("n2"), "t", List.of("k1", "k2", "k3", "k4", "k5"));
      Map<String, String[]> tablets = ClusterFixture.tablets(cluster.node("n3"), "t");
      assertEquals(6, tablets.size(), () -> "one tablet per split range: " + ClusterFixture.body(cluster.node("n3"),
          "/tabula/tablets?table=t"));
      Set<String> owners = new TreeSet<>();
      tablets.values().forEach(o -> owners.add(o[0]));
      assertEquals(Set.of("n1", "n2", "n3"), owners, "the tablets are spread over all three nodes");
      for (NodeJvm n : cluster.nodes) {
        n.awaitReady(java.time.Duration.ofSeconds(30));
      }

      List<String> expected = new ArrayList<>();
      List<BigtableDataClient> official = new ArrayList<>();
      try {
        for (NodeJvm n : cluster.nodes) {
          official.add(ClusterFixture.data(n));
        }
        for (int i = 0; i < 300; i++) {
          String key = String.format("k%d-official-%03d", i % 6, i);
          official.get(i % 3).mutateRow(RowMutation.create(TableId.of("t"), key).setCell("f", "q", "o" + i));
          expected.add(key);
        }
        try (TabulaClient tabula = TabulaClient.builder().endpoint(cluster.node("n1").endpoint())
            .instance(ClusterFixture.PROJECT, ClusterFixture.INSTANCE).build()) {
          for (int i = 0; i < 300; i++) {
            String key = String.format("k%d-tabula-%03d", i % 6, i);
            tabula.apply("t", io.tabula.client.RowMutation.create(key).setCell("f", "q", "t" + i))
                .toCompletableFuture().get(30, TimeUnit.SECONDS);
            expected.add(key);
          }
          List<io.tabula.client.Row> scanned = tabula.readRows(io.tabula.client.Query.table("t"))
              .toCompletableFuture().get(60, TimeUnit.SECONDS);
          List<String> keys = scanned.stream().map(io.tabula.client.Row::keyUtf8).toList();
          expected.sort(String::compareTo);
          assertEquals(expected, keys, "the Tabula client's scan returns every row once, in order");
        }
        for (int i = 0; i < 3; i++) {
          List<String> read = new ArrayList<>();
          for (Row r : official.get(i).readRows(Query.create(TableId.of("t")))) {
            read.add(r.getKey().toStringUtf8());
          }
          assertEquals(expected, read, "every row, in order, through " + cluster.nodes.get(i).name);
        }
      } finally {
        for (BigtableDataClient c : official) {
          c.close();
        }
      }
      // A MutateRows of a megabyte for one tablet, through every node: forwarded in messages
      // that fit the cluster transport; then row samples and a row-range drop from any node.
      try (BigtableDataClient one = ClusterFixture.data(cluster.node("n1"));
          BigtableDataClient two = ClusterFixture.data(cluster.node("n2"));
          BigtableDataClient three = ClusterFixture.data(cluster.node("n3"))) {
        List<BigtableDataClient> all = List.of(one, two, three);
        for (int n = 0; n < 3; n++) {
          com.google.cloud.bigtable.data.v2.models.BulkMutation bulk =
              com.google.cloud.bigtable.data.v2.models.BulkMutation.create(TableId.of("t"));
          for (int i = 0; i < 1000; i++) {
            bulk.add(com.google.cloud.bigtable.data.v2.models.RowMutationEntry.create(String.format("k3-bulk%d-%04d",
                n, i)).setCell("f", "q", "b".repeat(1000)));
          }
          all.get(n).bulkMutateRows(bulk);
        }
        for (BigtableDataClient c : all) {
          assertEquals(3000, count(c, Query.create(TableId.of("t")).prefix("k3-bulk")), "the bulk rows through "
              + "every node");
          assertTrue(c.sampleRowKeys(TableId.of("t")).size() >= 6, "row samples of every tablet");
        }
      }
      try (BigtableTableAdminClient admin = ClusterFixture.admin(cluster.node("n3"))) {
        admin.dropRowRange("t", "k3-bulk");
      }
      try (BigtableDataClient c = ClusterFixture.data(cluster.node("n1"))) {
        assertEquals(0, count(c, Query.create(TableId.of("t")).prefix("k3-bulk")), "dropped from any node");
        assertEquals(expected.size(), count(c, Query.create(TableId.of("t"))), "the other rows stay");
      }
      // A read of keys whose rows, 150 KB each, add up to megabytes on every node: each
      // other node answers the receiving node in pieces that fit the cluster transport.
      try (BigtableDataClient one = ClusterFixture.data(cluster.node("n1"));
          BigtableDataClient two = ClusterFixture.data(cluster.node("n2"));
          BigtableDataClient three = ClusterFixture.data(cluster.node("n3"))) {
        Query big = Query.create(TableId.of("t"));
        List<String> bigKeys = new ArrayList<>();
        for (int i = 0; i < 36; i++) {
          String key = String.format("k%d-big-%02d", i % 6, i);
          one.mutateRow(RowMutation.create(TableId.of("t"), key).setCell("f", "q", "v".repeat(150_000)));
          big.rowKey(key);
          bigKeys.add(key);
        }
        bigKeys.sort(String::compareTo);
        for (BigtableDataClient c : List.of(one, two, three)) {
          List<String> read = new ArrayList<>();
          for (Row r : c.readRows(big)) {
            assertEquals(150_000, r.getCells().get(0).getValue().size(), "the whole value of " + r.getKey());
            read.add(r.getKey().toStringUtf8());
          }
          assertEquals(bigKeys, read, "every large row once, in order");
        }
        // Many reads of keys at once through one node: while another node is busy, the reads
        // for it go together in one message, and each read gets exactly its own rows, also
        // when the large rows cut the shared answer short.
        java.util.Random random = new java.util.Random(7);
        List<com.google.api.core.ApiFuture<List<Row>>> pending = new ArrayList<>();
        List<List<String>> asked = new ArrayList<>();
        for (int q = 0; q < 120; q++) {
          Query query = Query.create(TableId.of("t"));
          java.util.TreeSet<String> keys = new java.util.TreeSet<>();
          while (keys.size() < 12) {
            keys.add(expected.get(random.nextInt(expected.size())));
          }
          if (q % 4 == 0) {
            keys.add(bigKeys.get(random.nextInt(bigKeys.size())));
            keys.add(bigKeys.get(random.nextInt(bigKeys.size())));
          }
          keys.forEach(query::rowKey);
          asked.add(new ArrayList<>(keys));
          pending.add(one.readRowsCallable().all().futureCall(query));
        }
        for (int q = 0; q < pending.size(); q++) {
          List<String> got = pending.get(q).get(60, TimeUnit.SECONDS).stream()
              .map(r -> r.getKey().toStringUtf8()).toList();
          assertEquals(asked.get(q), got, "read " + q + " gets its own rows, once, in order");
        }
      }
      String nodes = cluster.node("n1").get("/tabula/nodes").body();
      for (String n : List.of("n1", "n2", "n3")) {
        assertTrue(nodes.contains("\"name\":\"" + n + "\""), nodes);
      }
      // Views of the whole directory come from the master's node (n1, the oldest), whichever node is asked.
      for (String path : List.of("/tabula/nodes", "/tabula/tables", "/tabula/tablets?table=t")) {
        var fromN3 = cluster.node("n3").get(path);
        assertEquals(200, fromN3.statusCode(), path + ": " + fromN3.body());
        assertEquals(java.util.Optional.of("n1"), fromN3.headers().firstValue("Tabula-Shown-By"), path);
      }
      assertEquals(ClusterFixture.tablets(cluster.node("n1"), "t").keySet(),
          ClusterFixture.tablets(cluster.node("n3"), "t").keySet());
    }
  }
}
