package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.cloud.bigtable.emulator.core.EmulatorController;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.grpc.Status;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official Node.js client ({@link NodeClient}), unchanged, against a secured cluster of
 * three nodes in this JVM ({@link ConformancePeer.SecureNodes}: TLS on every port, mutual TLS
 * between the nodes, bearer tokens): every scenario of {@code src/test/node/scenarios.js}
 * (admin, writes, reads with ranges and filters, check-and-mutate, read-modify-write,
 * samples, deletes) answers over TLS with an admin's token exactly as Google's bundled
 * emulator answers it in plaintext; a wrong token is UNAUTHENTICATED and a reader's write
 * PERMISSION_DENIED, as the client reports them.
 *
 * <p>Each table is made through n2; the calls on it then go to a node that owns none of its
 * tablets, so every answer crosses the cluster: the receiving node authenticates the caller
 * and checks the policy, the owning node serves.
 */
class NodeClientTest {
  static ConformancePeer.SecureNodes cluster;

  @BeforeAll
  static void start() throws IOException, InterruptedException {
    NodeClient.install();
    cluster = ConformancePeer.SecureNodes.start();
  }

  @AfterAll
  static void stop() throws IOException {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void everyScenarioAnswersThroughTheClusterAsTheEmulatorAnswersInPlaintext()
      throws IOException, InterruptedException, TimeoutException {
    EmulatorController emulator = EmulatorController.createBundled();
    NodeClient.Run reference;
    emulator.start();
    try {
      reference = NodeClient.run("127.0.0.1:" + emulator.getPort(), null, null, "node-client");
    } finally {
      emulator.stop();
    }
    List<String> scenarios = new ArrayList<>(reference.scenarios().keySet());
    assertEquals("createTable", scenarios.get(0));
    NodeClient.Run created = admin(cluster.called(), "node-client", "createTable");
    NodeClient.Run rest = admin(elsewhere("node-client"), "node-client",
        scenarios.subList(1, scenarios.size()).toArray(String[]::new));
    Map<String, JsonObject> lines = new LinkedHashMap<>(created.scenarios());
    lines.putAll(rest.scenarios());
    NodeClient.Run tabula = new NodeClient.Run(lines, created.output() + "\n" + rest.output());
    assertEquals(reference.scenarios().keySet(), tabula.scenarios().keySet());
    for (String scenario : reference.scenarios().keySet()) {
      String expected = reference.ok(scenario).get("result").toString();
      assertEquals(expected, tabula.ok(scenario).get("result").toString(),
          scenario + ": Tabula answers unlike the emulator\n--- emulator\n" + reference.output()
              + "\n--- tabula\n" + tabula.output());
    }
    // The scenarios see data at all: equal answers must not be equally empty.
    assertEquals(7, tabula.ok("insertBatch").get("result").getAsInt(), tabula.output());
    JsonArray latest = tabula.ok("readModifyWrite").getAsJsonObject("result").getAsJsonArray("row");
    assertEquals("[\"counter\",[[\"cf\",\"n\",\"-\",\"8\"],[\"cf\",\"s\",\"-\",\"abcd\"]]]", latest.toString(),
        tabula.output());
    assertFalse(tabula.ok("deleteTable").get("result").getAsBoolean(), tabula.output());
  }

  @Test
  void aWrongTokenIsUnauthenticatedFromTheFirstCall() throws IOException, InterruptedException {
    NodeClient.Run run = NodeClient.run(address(cluster.called()), cluster.security().caFile(),
        "not-" + cluster.security().adminToken(), "never-made", "createTable", "readAll");
    assertEquals(Status.Code.UNAUTHENTICATED.value(), run.failedWith("createTable"), run.output());
    assertEquals(Status.Code.UNAUTHENTICATED.value(), run.failedWith("readAll"), run.output());
  }

  @Test
  void aReaderReadsButMayNotWrite() throws IOException, InterruptedException {
    NodeClient.Run admin = admin(cluster.called(), "read-only", "createTable", "mutateRow");
    String written = admin.ok("mutateRow").get("result").toString();
    NodeClient.Run reader = NodeClient.run(address(elsewhere("read-only")), cluster.security().caFile(),
        cluster.security().readerToken(), "read-only", "readAll", "mutateRow", "insertBatch", "deleteTable");
    assertEquals(written, reader.ok("readAll").get("result").toString(), reader.output());
    for (String write : new String[] {"mutateRow", "insertBatch", "deleteTable"}) {
      assertEquals(Status.Code.PERMISSION_DENIED.value(), reader.failedWith(write), write + "\n" + reader.output());
    }
  }

  /** {@code scenarios} on {@code table} with the admin's token through {@code node}. */
  private static NodeClient.Run admin(TabulaNode node, String table, String... scenarios)
      throws IOException, InterruptedException {
    return NodeClient.run(address(node), cluster.security().caFile(), cluster.security().adminToken(), table,
        scenarios);
  }

  /** A node owning no tablet of {@code table}; it says which it is. */
  private static TabulaNode elsewhere(String table) throws IOException, InterruptedException {
    TabulaNode node = cluster.notOwning(table);
    System.out.println("the client calls " + node.settings().name() + ", which owns no tablet of " + table);
    return node;
  }

  private static String address(TabulaNode node) {
    return "127.0.0.1:" + node.grpcPort();
  }
}
