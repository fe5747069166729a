package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.typesafe.config.ConfigFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node started with a warm-up has called its own endpoint before it reports itself
 * serving (its metrics count the calls), and leaves no trace of its scratch table; a scratch
 * table an earlier start left is dropped, and one whose tablet is not served on the node is
 * dropped without a call to it.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NodeWarmUpTest {
  @TempDir
  Path dir;

  @Test
  void aWarmedUpNodeHasCalledItselfAndDroppedItsScratchTable() throws Exception {
    long start = System.nanoTime();
    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(),
        "tabula.node.grpc-port", 0, "tabula.node.http-port", 0, "tabula.node.warm-up", "3s")))) {
      double seconds = (System.nanoTime() - start) / 1e9;
      assertTrue(seconds >= 3, "start returned after the warm-up's time, not " + seconds + " s");
      String m = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
          + node.httpPort() + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      for (String method : List.of("MutateRow", "MutateRows", "ReadRows")) {
        assertTrue(count(m, method) >= 10, method + " calls were made before the node served: " + count(m, method));
      }
      assertEquals(1, count(m, "CreateTable"));
      assertEquals(1, count(m, "DeleteTable"));
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(BigtableTableAdminSettings
          .newBuilderForEmulator("127.0.0.1", node.grpcPort()).setProjectId("p").setInstanceId("i").build())) {
        assertEquals(List.of(), admin.listTables(), "the scratch table is gone");
      }
    }
  }

  /**
   * A node with TLS and authentication warms up too: its calls to itself go over TLS, trusting
   * its own certificate, with its own token (an admin table call, then data calls).
   */
  @Test
  void aSecuredNodeWarmsUpOverTlsWithItsOwnToken() throws Exception {
    io.tabula.cluster.security.TestPki ca = io.tabula.cluster.security.TestPki.ca("warm-up CA");
    io.tabula.cluster.security.TestPki.KeyFiles files = ca.issue("CN=node1").write(dir, "node");
    Path auth = java.nio.file.Files.writeString(dir.resolve("auth.conf"), "tabula.security { tokens = [ { principal"
        + " = \"user:ana@example.com\", token = \"ana-token-0123456789\" } ], admins = [\"user:ana@example.com\"] }");
    ch.qos.logback.classic.Logger log = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
        NodeWarmUp.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
        new ch.qos.logback.core.read.ListAppender<>();
    lines.start();
    log.addAppender(lines);
    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir",
        dir.resolve("data").toString(), "tabula.node.grpc-port", 0, "tabula.node.http-port", 0,
        "tabula.node.warm-up", "2s", "tabula.node.tls.cert-file", files.cert().toString(),
        "tabula.node.tls.key-file", files.key().toString(), "tabula.security.auth-file", auth.toString())))) {
      List<String> said = lines.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
          .toList();
      assertTrue(said.stream().anyMatch(l -> l.startsWith("warmed up in")), String.join("\n", said));
    } finally {
      log.detachAppender(lines);
    }
  }

  @Test
  void aLeftoverScratchTableIsDroppedAndOneServedElsewhereIsDroppedWithoutWarmingUp() throws Exception {
    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(),
        "tabula.node.grpc-port", 0, "tabula.node.http-port", 0)))) {
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(BigtableTableAdminSettings
          .newBuilderForEmulator("127.0.0.1", node.grpcPort()).setProjectId("p").setInstanceId("i").build())) {
        // What a start stopped midway leaves behind.
        admin.createTable(CreateTableRequest.of(NodeWarmUp.table(node.settings().name())).addFamily("f"));
      }
      // As if the master had placed the scratch table's tablet on another node.
      NodeWarmUp.Outcome o = NodeWarmUp.run(node.system(), node.settings().name(), "127.0.0.1", node.grpcPort(),
          Duration.ofSeconds(30), table -> false, s -> s.withTls(false));
      assertEquals(0, o.rounds());
      assertEquals(0, o.calls());
      String m = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
          + node.httpPort() + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      assertEquals(0, count(m, "MutateRow"), "no data call was made");
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(BigtableTableAdminSettings
          .newBuilderForEmulator("127.0.0.1", node.grpcPort()).setProjectId("p").setInstanceId("i").build())) {
        assertEquals(List.of(), admin.listTables(), "the scratch table is gone");
      }
    }
  }

  private static double count(String metrics, String method) {
    Matcher m = Pattern.compile("^tabula_grpc_requests_seconds_count\\{code=\"OK\",method=\"" + method
        + "\"\\S* (\\S+)$", Pattern.MULTILINE).matcher(metrics);
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }
}
