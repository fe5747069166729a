package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.core.FixedCredentialsProvider;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.api.gax.rpc.AbortedException;
import com.google.api.gax.rpc.PermissionDeniedException;
import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.cloud.Identity;
import com.google.cloud.Policy;
import com.google.cloud.Role;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.CreateAuthorizedViewRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.FamilySubsets;
import com.google.cloud.bigtable.admin.v2.models.SubsetView;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.models.AuthorizedViewId;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.cloud.bigtable.data.v2.stub.EnhancedBigtableStubSettings;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import com.typesafe.config.ConfigFactory;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Policies on tables and authorized views, and the views themselves, through the official Java
 * client over TLS with bearer tokens, against a secured node: a table's grant lets its principal
 * read that table only, an etag stops a change made against an older policy, a view's grant
 * reaches the view's rows and columns and not its table, writes outside a view are refused, a
 * caller learns which permissions it holds, and all of it is in the master's journal (it holds
 * after the node restarts).
 */
class TablePoliciesTest {
  private static final String PROJECT = "p";
  private static final String INSTANCE = "i";
  private static final Map<String, String> TOKENS = Map.of("admin", "admin-token-0123456789",
      "ana", "ana-token-0123456789", "bo", "bo-token-0123456789");

  @TempDir
  Path dir;
  private Path caFile;
  private final List<AutoCloseable> clients = new ArrayList<>();

  @Test
  void tableAndViewPoliciesDecideWhoReadsAndWritesWhat() throws Exception {
    TabulaNode node = start();
    try {
      BigtableTableAdminClient admin = admin(node, "admin");
      admin.createTable(CreateTableRequest.of("t").addFamily("f").addFamily("g"));
      BigtableDataClient asAdmin = data(node, "admin");
      asAdmin.mutateRow(RowMutation.create(TableId.of("t"), "eu#1").setCell("f", "name", "Ada").setCell("f", "secret",
          "s").setCell("g", "x", "1"));
      asAdmin.mutateRow(RowMutation.create(TableId.of("t"), "us#1").setCell("f", "name", "Bob"));

      BigtableDataClient ana = data(node, "ana");
      assertThrows(PermissionDeniedException.class, () -> rows(ana, Query.create(TableId.of("t"))));
      Policy before = admin.getIamPolicy("t");
      Policy granted = admin.setIamPolicy("t", before.toBuilder().addIdentity(Role.of("bigtable.reader"),
          Identity.user("ana@example.com")).build());
      assertEquals(2, rows(ana, Query.create(TableId.of("t"))).size(), "a reader of the table reads it");
      PermissionDeniedException write = assertThrows(PermissionDeniedException.class, () -> ana.mutateRow(
          RowMutation.create(TableId.of("t"), "eu#9").setCell("f", "name", "x")));
      assertTrue(write.getMessage().contains("bigtable.tables.mutateRows"), write.getMessage());
      // An etag stops a change made against a policy someone else changed since.
      assertThrows(AbortedException.class, () -> admin.setIamPolicy("t", before.toBuilder()
          .addIdentity(Role.of("bigtable.admin"), Identity.user("ana@example.com")).build()));
      assertEquals(granted, admin.getIamPolicy("t"));
      assertEquals(List.of("bigtable.tables.readRows"), admin(node, "ana").testIamPermission("t",
          "bigtable.tables.readRows", "bigtable.tables.mutateRows"));

      admin.createAuthorizedView(CreateAuthorizedViewRequest.of("t", "europe").setAuthorizedViewType(
          SubsetView.create().addRowPrefix("eu#").setFamilySubsets("f", FamilySubsets.create().addQualifier("name"))));
      admin.setAuthorizedViewIamPolicy("t", "europe", Policy.newBuilder().addIdentity(Role.of("bigtable.user"),
          Identity.user("bo@example.com")).build());
      BigtableDataClient bo = data(node, "bo");
      AuthorizedViewId europe = AuthorizedViewId.of("t", "europe");
      assertEquals(Map.of("eu#1", List.of("f:name=Ada")), cells(rows(bo, Query.create(europe))),
          "through the view: its rows, its columns");
      assertThrows(PermissionDeniedException.class, () -> rows(bo, Query.create(TableId.of("t"))),
          "a grant on a view does not reach its table");
      bo.mutateRow(RowMutation.create(europe, "eu#2").setCell("f", "name", "Cy"));
      assertThrows(PermissionDeniedException.class, () -> bo.mutateRow(RowMutation.create(europe, "us#2")
          .setCell("f", "name", "x")), "a row outside the view");
      assertThrows(PermissionDeniedException.class, () -> bo.mutateRow(RowMutation.create(europe, "eu#3")
          .setCell("f", "secret", "x")), "a column outside the view");
      assertThrows(PermissionDeniedException.class, () -> bo.mutateRow(RowMutation.create(europe, "eu#3")
          .addToCell("f", "secret", 1000, 1)), "an aggregate write to a column outside the view");
      assertThrows(PermissionDeniedException.class, () -> bo.mutateRow(RowMutation.create(europe, "eu#3")
          .mergeToCell("f", "secret", 1000, com.google.protobuf.ByteString.copyFrom(new byte[8]))),
          "an aggregate merge into a column outside the view");
      assertEquals(3, rows(asAdmin, Query.create(TableId.of("t"))).size());
    } finally {
      closeClients();
      node.close();
    }
    // The policies and the view are in the master's journal: a node started again on the root has them.
    TabulaNode again = start();
    try {
      assertEquals(3, rows(data(again, "ana"), Query.create(TableId.of("t"))).size());
      assertEquals(2, rows(data(again, "bo"), Query.create(AuthorizedViewId.of("t", "europe"))).size());
    } finally {
      closeClients();
      again.close();
    }
  }

  /**
   * What the view checks hold against: a request that names a view and then, in a later
   * occurrence of the same field, none (protobuf takes the last); a view of every row (prefix
   * ""); lifting a view's deletion protection alone; a table's admin (not the instance's)
   * changing the table's views.
   */
  @Test
  void viewChecksHoldForCraftedRequestsAndEdgeViews() throws Exception {
    TabulaNode node = start();
    try {
      BigtableTableAdminClient admin = admin(node, "admin");
      admin.createTable(CreateTableRequest.of("t").addFamily("f"));
      BigtableDataClient asAdmin = data(node, "admin");
      asAdmin.mutateRow(RowMutation.create(TableId.of("t"), "eu#1").setCell("f", "q", "a"));
      asAdmin.mutateRow(RowMutation.create(TableId.of("t"), "us#1").setCell("f", "q", "b"));
      admin.createAuthorizedView(CreateAuthorizedViewRequest.of("t", "europe").setAuthorizedViewType(
          SubsetView.create().addRowPrefix("eu#").setFamilySubsets("f", FamilySubsets.create().addQualifierPrefix(""))));
      admin.setAuthorizedViewIamPolicy("t", "europe", Policy.newBuilder().addIdentity(Role.of("bigtable.user"),
          Identity.user("bo@example.com")).build());
      String table = "projects/" + PROJECT + "/instances/" + INSTANCE + "/tables/t";
      // authorized_view_name = the view, table_name = t, then authorized_view_name = "": the request reads t whole.
      byte[] crafted = concat(com.google.bigtable.v2.ReadRowsRequest.newBuilder().setAuthorizedViewName(table
          + "/authorizedViews/europe").build().toByteArray(), com.google.bigtable.v2.ReadRowsRequest.newBuilder()
          .setTableName(table).build().toByteArray(), new byte[] {0x4a, 0x00});
      assertEquals("", com.google.bigtable.v2.ReadRowsRequest.parseFrom(crafted).getAuthorizedViewName());
      io.grpc.StatusRuntimeException denied = assertThrows(io.grpc.StatusRuntimeException.class,
          () -> rawRows(node, "bo", crafted));
      assertEquals(io.grpc.Status.Code.PERMISSION_DENIED, denied.getStatus().getCode(), denied.toString());

      admin.createAuthorizedView(CreateAuthorizedViewRequest.of("t", "everything").setDeletionProtection(true)
          .setAuthorizedViewType(SubsetView.create().addRowPrefix("").setFamilySubsets("f",
              FamilySubsets.create().addQualifierPrefix(""))));
      assertEquals(2, rows(asAdmin, Query.create(AuthorizedViewId.of("t", "everything"))).size(),
          "a view of prefix \"\" holds every row");
      assertThrows(com.google.api.gax.rpc.FailedPreconditionException.class,
          () -> admin.deleteAuthorizedView("t", "everything"));
      admin.updateAuthorizedView(com.google.cloud.bigtable.admin.v2.models.UpdateAuthorizedViewRequest.of("t",
          "everything").setDeletionProtection(false));
      admin.deleteAuthorizedView("t", "everything");

      // A table's admin, not the instance's, changes the table's views.
      admin.setIamPolicy("t", admin.getIamPolicy("t").toBuilder().addIdentity(Role.of("bigtable.admin"),
          Identity.user("ana@example.com")).build());
      BigtableTableAdminClient ana = admin(node, "ana");
      ana.updateAuthorizedView(com.google.cloud.bigtable.admin.v2.models.UpdateAuthorizedViewRequest.of("t",
          "europe").setDeletionProtection(true));
      assertTrue(ana.getAuthorizedView("t", "europe").isDeletionProtected());
    } finally {
      closeClients();
      node.close();
    }
  }

  private static byte[] concat(byte[]... parts) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** A ReadRows of {@code request}'s bytes as {@code who}, over TLS with grpc-java: the rows' responses counted. */
  private int rawRows(TabulaNode node, String who, byte[] request) throws IOException, InterruptedException {
    io.grpc.ManagedChannel ch = io.grpc.Grpc.newChannelBuilderForAddress("localhost", node.grpcPort(),
        io.grpc.TlsChannelCredentials.newBuilder().trustManager(caFile.toFile()).build()).build();
    try {
      io.grpc.Metadata m = new io.grpc.Metadata();
      m.put(io.grpc.Metadata.Key.of("authorization", io.grpc.Metadata.ASCII_STRING_MARSHALLER), "Bearer "
          + TOKENS.get(who));
      java.util.Iterator<byte[]> it = io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          io.grpc.ClientInterceptors.intercept(ch, io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(m))
              .newCall(io.tabula.cluster.RawGrpc.method("google.bigtable.v2.Bigtable", "ReadRows",
                  io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING), io.grpc.CallOptions.DEFAULT
                  .withDeadlineAfter(10, java.util.concurrent.TimeUnit.SECONDS)), request);
      int n = 0;
      while (it.hasNext()) {
        it.next();
        n++;
      }
      return n;
    } finally {
      ch.shutdownNow().awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  private TabulaNode start() throws IOException {
    if (caFile == null) {
      TestPki ca = TestPki.ca("policies test CA");
      caFile = ca.writeCertificate(dir.resolve("ca.crt"));
      ca.issue("CN=node1").write(dir, "node");
      StringBuilder tokens = new StringBuilder();
      TOKENS.forEach((who, token) -> tokens.append("{ principal = \"user:").append(who)
          .append("@example.com\", token = \"").append(token).append("\" }\n"));
      Files.writeString(dir.resolve("auth.conf"), "tabula.security {\n tokens = [\n" + tokens
          + "]\n admins = [\"user:admin@example.com\"]\n}\n");
    }
    Map<String, Object> settings = new HashMap<>();
    settings.put("tabula.node.data-dir", dir.resolve("data").toString());
    settings.put("tabula.node.grpc-port", 0);
    settings.put("tabula.node.http-port", 0);
    settings.put("tabula.node.tls.cert-file", dir.resolve("node.crt").toString());
    settings.put("tabula.node.tls.key-file", dir.resolve("node.key").toString());
    settings.put("tabula.security.auth-file", dir.resolve("auth.conf").toString());
    return TabulaNode.start(ConfigFactory.parseMap(settings));
  }

  private InstantiatingGrpcChannelProvider tls() throws IOException {
    SslContext ssl = GrpcSslContexts.forClient().trustManager(caFile.toFile()).build();
    return InstantiatingGrpcChannelProvider.newBuilder()
        .setChannelConfigurator(b -> ((NettyChannelBuilder) b).sslContext(ssl)).build();
  }

  private static FixedCredentialsProvider token(String who) {
    return FixedCredentialsProvider.create(GoogleCredentials.create(new AccessToken(TOKENS.get(who),
        Date.from(Instant.parse("2100-01-01T00:00:00Z")))));
  }

  @SuppressWarnings("deprecation") // disableInternalMetrics: the client would export to Cloud Monitoring
  private BigtableDataClient data(TabulaNode node, String who) throws IOException {
    BigtableDataSettings.Builder b = BigtableDataSettings.newBuilder().setProjectId(PROJECT).setInstanceId(INSTANCE)
        .setCredentialsProvider(token(who)).setMetricsProvider(NoopMetricsProvider.INSTANCE).disableInternalMetrics();
    b.stubSettings().setEndpoint("localhost:" + node.grpcPort()).setTransportChannelProvider(tls())
        .setDirectPathConfig(EnhancedBigtableStubSettings.DirectPathConfig.FORCED_OFF).setSessionsEnabled(false)
        .setRefreshingChannel(false);
    BigtableDataClient c = BigtableDataClient.create(b.build());
    clients.add(c);
    return c;
  }

  private BigtableTableAdminClient admin(TabulaNode node, String who) throws IOException {
    BigtableTableAdminSettings.Builder b = BigtableTableAdminSettings.newBuilder().setProjectId(PROJECT)
        .setInstanceId(INSTANCE);
    b.stubSettings().setEndpoint("localhost:" + node.grpcPort()).setTransportChannelProvider(tls())
        .setCredentialsProvider(token(who));
    BigtableTableAdminClient c = BigtableTableAdminClient.create(b.build());
    clients.add(c);
    return c;
  }

  private void closeClients() throws Exception {
    for (AutoCloseable c : clients) {
      c.close();
    }
    clients.clear();
  }

  private static List<Row> rows(BigtableDataClient c, Query q) {
    List<Row> out = new ArrayList<>();
    c.readRows(q).forEach(out::add);
    return out;
  }

  private static Map<String, List<String>> cells(List<Row> rows) {
    Map<String, List<String>> out = new TreeMap<>();
    for (Row r : rows) {
      List<String> cs = new ArrayList<>();
      for (RowCell c : r.getCells()) {
        cs.add(c.getFamily() + ":" + c.getQualifier().toStringUtf8() + "=" + c.getValue().toStringUtf8());
      }
      out.put(r.getKey().toStringUtf8(), cs);
    }
    return out;
  }
}
