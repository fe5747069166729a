package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.rpc.PermissionDeniedException;
import com.google.api.gax.rpc.UnauthenticatedException;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.TabulaNode;
import io.tabula.cluster.security.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user of the official Java clients sees from a node with TLS and authentication (one
 * node in this JVM on free loopback ports, called over TLS trusting a test CA): a principal
 * holding only {@code roles/bigtable.reader} reads rows, and its write fails with the client's
 * {@link PermissionDeniedException} naming the permission it lacks ({@code
 * bigtable.tables.mutateRows}) and changes nothing; a client without credentials is refused
 * with {@link UnauthenticatedException}, on the data and the admin API.
 */
class OfficialClientPermissionsTest {
  private static final TableId TABLE = TableId.of("t");
  private static final String ADMIN_TOKEN = "admin-token-0123456789";
  private static final String READER_TOKEN = "reader-token-0123456789";

  @TempDir
  static Path dir;
  static Path ca;
  static TabulaNode node;
  /** Closed after the class, before the node. */
  static final List<AutoCloseable> clients = new ArrayList<>();
  static BigtableDataClient admin;

  @BeforeAll
  static void start() throws IOException {
    TestPki pki = TestPki.ca("tabula permissions CA");
    ca = pki.writeCertificate(dir.resolve("ca.crt"));
    TestPki.KeyFiles cert = pki.issue("CN=node,O=tabula").write(dir, "node");
    Path auth = Files.writeString(dir.resolve("auth.conf"), "tabula.security {\n"
        + "  tokens = [\n"
        + "    { principal = \"user:admin@example.com\", token = \"" + ADMIN_TOKEN + "\" }\n"
        + "    { principal = \"user:reader@example.com\", token = \"" + READER_TOKEN + "\" }\n"
        + "  ]\n"
        + "  admins = [\"user:admin@example.com\"]\n"
        + "  bindings = [ { role = roles/bigtable.reader, members = [\"user:reader@example.com\"] } ]\n"
        + "}\n");
    node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.resolve("data").toString(),
        "tabula.node.grpc-port", 0, "tabula.node.http-port", 0,
        "tabula.node.tls.cert-file", cert.cert().toString(), "tabula.node.tls.key-file", cert.key().toString(),
        "tabula.security.auth-file", auth.toString())));
    try (BigtableTableAdminClient tables = adminClient(TlsClients.token(ADMIN_TOKEN))) {
      tables.createTable(CreateTableRequest.of(TABLE.getTableId()).addFamily("f"));
    }
    admin = dataClient(TlsClients.token(ADMIN_TOKEN));
    admin.mutateRow(RowMutation.create(TABLE, "r1").setCell("f", "q", 1000L, "v1"));
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      for (AutoCloseable c : clients) {
        c.close();
      }
    } finally {
      if (node != null) {
        node.close();
      }
    }
  }

  @Test
  void aReaderReadsButItsWriteIsDeniedNamingThePermission() throws IOException {
    BigtableDataClient reader = dataClient(TlsClients.token(READER_TOKEN));
    Row row = reader.readRow(TABLE, "r1");
    assertNotNull(row, "the reader reads the row the admin wrote");
    assertEquals("v1", row.getCells().get(0).getValue().toStringUtf8());
    assertEquals(1, count(reader, Query.create(TABLE)));

    PermissionDeniedException denied = assertThrows(PermissionDeniedException.class,
        () -> reader.mutateRow(RowMutation.create(TABLE, "r2").setCell("f", "q", 1000L, "v2")));
    assertTrue(denied.getMessage().contains("bigtable.tables.mutateRows"), denied.getMessage());
    assertTrue(denied.getMessage().contains("user:reader@example.com"), denied.getMessage());
    assertEquals(1, count(admin, Query.create(TABLE)), "the denied write changed nothing");
  }

  @Test
  void aClientWithoutCredentialsIsUnauthenticated() throws IOException {
    BigtableDataClient anonymous = dataClient(NoCredentialsProvider.create());
    UnauthenticatedException e = assertThrows(UnauthenticatedException.class,
        () -> anonymous.readRow(TABLE, "r1"));
    assertTrue(e.getMessage().contains("UNAUTHENTICATED"), e.getMessage());
    BigtableTableAdminClient anonymousAdmin = adminClient(NoCredentialsProvider.create());
    clients.add(anonymousAdmin);
    assertThrows(UnauthenticatedException.class, anonymousAdmin::listTables);
  }

  private static int count(BigtableDataClient client, Query query) {
    int n = 0;
    for (Row r : client.readRows(query)) {
      n++;
    }
    return n;
  }

  private static BigtableDataClient dataClient(com.google.api.gax.core.CredentialsProvider credentials)
      throws IOException {
    BigtableDataClient c = BigtableDataClient.create(ConformancePeer.bounded(TlsClients.data(node.grpcPort(), ca,
        credentials)));
    clients.add(c);
    return c;
  }

  private static BigtableTableAdminClient adminClient(com.google.api.gax.core.CredentialsProvider credentials)
      throws IOException {
    return BigtableTableAdminClient.create(ConformancePeer.bounded(TlsClients.admin(node.grpcPort(), ca,
        credentials)));
  }
}
