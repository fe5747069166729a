package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.cloud.bigtable.emulator.core.EmulatorController;
import com.google.gson.JsonArray;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official Node.js client ({@link NodeClient}), unchanged, against a node in this JVM
 * with TLS and bearer tokens: every scenario of {@code src/test/node/scenarios.js} (admin,
 * writes, reads with ranges and filters, check-and-mutate, read-modify-write, samples,
 * deletes) answers over TLS with an admin's token exactly as Google's bundled emulator
 * answers it in plaintext; a wrong token is UNAUTHENTICATED and a reader's write
 * PERMISSION_DENIED, as the client reports them.
 */
class NodeClientTest {
  private static final String ADMIN_TOKEN = "node-admin-token-0123456789";
  private static final String READER_TOKEN = "node-reader-token-0123456789";

  @TempDir
  static Path dir;
  static Path caFile;
  static TabulaNode node;

  @BeforeAll
  static void start() throws IOException, InterruptedException {
    NodeClient.install();
    TestPki ca = TestPki.ca("tabula node-client test CA");
    caFile = ca.writeCertificate(dir.resolve("ca.crt"));
    TestPki.KeyFiles nodeFiles = ca.issue("CN=node1,O=tabula").write(dir, "node");
    Path auth = Files.writeString(dir.resolve("auth.conf"), "tabula.security {\n tokens = [\n"
        + " { principal = \"user:admin@example.com\", token = \"" + ADMIN_TOKEN + "\" }\n"
        + " { principal = \"user:reader@example.com\", token = \"" + READER_TOKEN + "\" }\n ]\n"
        + " admins = [\"user:admin@example.com\"]\n"
        + " bindings = [ { role = roles/bigtable.reader, members = [\"user:reader@example.com\"] } ]\n}\n");
    node = TabulaNode.start(ConfigFactory.parseMap(Map.of(
        "tabula.node.data-dir", dir.resolve("data").toString(),
        "tabula.node.grpc-port", 0,
        "tabula.node.http-port", 0,
        "tabula.node.tls.cert-file", nodeFiles.cert().toString(),
        "tabula.node.tls.key-file", nodeFiles.key().toString(),
        "tabula.security.auth-file", auth.toString())));
  }

  @AfterAll
  static void stop() {
    if (node != null) {
      node.close();
    }
  }

  @Test
  void everyScenarioAnswersOverTlsAsTheEmulatorAnswersInPlaintext()
      throws IOException, InterruptedException, TimeoutException {
    EmulatorController emulator = EmulatorController.createBundled();
    NodeClient.Run reference;
    emulator.start();
    try {
      reference = NodeClient.run("127.0.0.1:" + emulator.getPort(), null, null, "node-client");
    } finally {
      emulator.stop();
    }
    NodeClient.Run tabula = NodeClient.run(tabula(), caFile, ADMIN_TOKEN, "node-client");
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
    NodeClient.Run run = NodeClient.run(tabula(), caFile, "not-" + ADMIN_TOKEN, "never-made", "createTable",
        "readAll");
    assertEquals(Status.Code.UNAUTHENTICATED.value(), run.failedWith("createTable"), run.output());
    assertEquals(Status.Code.UNAUTHENTICATED.value(), run.failedWith("readAll"), run.output());
  }

  @Test
  void aReaderReadsButMayNotWrite() throws IOException, InterruptedException {
    NodeClient.Run admin = NodeClient.run(tabula(), caFile, ADMIN_TOKEN, "read-only", "createTable", "mutateRow");
    String written = admin.ok("mutateRow").get("result").toString();
    NodeClient.Run reader = NodeClient.run(tabula(), caFile, READER_TOKEN, "read-only", "readAll", "mutateRow",
        "insertBatch", "deleteTable");
    assertEquals(written, reader.ok("readAll").get("result").toString(), reader.output());
    for (String write : new String[] {"mutateRow", "insertBatch", "deleteTable"}) {
      assertEquals(Status.Code.PERMISSION_DENIED.value(), reader.failedWith(write), write + "\n" + reader.output());
    }
  }

  private static String tabula() {
    return "127.0.0.1:" + node.grpcPort();
  }
}
