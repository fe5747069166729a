package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import com.google.cloud.bigtable.admin.v2.models.CreateBackupRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.RestoreTableRequest;
import com.google.cloud.bigtable.admin.v2.models.UpdateBackupRequest;
import com.typesafe.config.ConfigFactory;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.threeten.bp.Instant;
import org.threeten.bp.temporal.ChronoUnit;

/**
 * Backups' own IAM policies through the official Java admin client over TLS with bearer tokens
 * (docs/security.md): a grant on a backup reaches that backup and no other, an etag stops a
 * change made against an older policy, a caller learns what it holds on a backup, RestoreTable
 * needs bigtable.tables.create on the instance besides bigtable.backups.restore, and a deleted
 * backup's policy goes with it (a new backup of the same id starts with none).
 */
class BackupPoliciesTest {
  private static final String CLUSTER = "tabula";
  private static final Map<String, String> TOKENS = Map.of("admin", "admin-token-0123456789",
      "ana", "ana-token-0123456789", "bo", "bo-token-0123456789");

  @TempDir
  Path dir;
  private Path caFile;
  private final List<AutoCloseable> clients = new ArrayList<>();

  @Test
  void aBackupsPolicyDecidesWhoMayDoWhatWithIt() throws Exception {
    TabulaNode node = start();
    try {
      BigtableTableAdminClient admin = admin(node, "admin");
      admin.createTable(CreateTableRequest.of("t").addFamily("f"));
      Instant week = Instant.now().plus(7, ChronoUnit.DAYS);
      admin.createBackup(CreateBackupRequest.of(CLUSTER, "b").setSourceTableId("t").setExpireTime(week));
      admin.createBackup(CreateBackupRequest.of(CLUSTER, "other").setSourceTableId("t").setExpireTime(week));

      BigtableTableAdminClient ana = admin(node, "ana");
      assertThrows(PermissionDeniedException.class, () -> ana.getBackup(CLUSTER, "b"));
      Policy before = admin.getBackupIamPolicy(CLUSTER, "b");
      assertTrue(before.getBindingsList().isEmpty(), before.toString());
      Policy granted = admin.setBackupIamPolicy(CLUSTER, "b", before.toBuilder().addIdentity(
          Role.of("bigtable.viewer"), Identity.user("ana@example.com")).build());
      assertEquals("b", ana.getBackup(CLUSTER, "b").getId(), "a viewer of the backup sees it");
      assertThrows(PermissionDeniedException.class, () -> ana.getBackup(CLUSTER, "other"), "and no other backup");
      PermissionDeniedException update = assertThrows(PermissionDeniedException.class, () -> ana.updateBackup(
          UpdateBackupRequest.of(CLUSTER, "b").setExpireTime(week.plusSeconds(60))));
      assertTrue(update.getMessage().contains("bigtable.backups.update"), update.getMessage());
      assertThrows(PermissionDeniedException.class, () -> ana.setBackupIamPolicy(CLUSTER, "b", granted.toBuilder()
          .addIdentity(Role.of("bigtable.admin"), Identity.user("ana@example.com")).build()));
      // An etag stops a change made against a policy someone else changed since.
      assertThrows(AbortedException.class, () -> admin.setBackupIamPolicy(CLUSTER, "b", before.toBuilder()
          .addIdentity(Role.of("bigtable.admin"), Identity.user("bo@example.com")).build()));
      assertEquals(granted, admin.getBackupIamPolicy(CLUSTER, "b"));
      assertEquals(List.of("bigtable.backups.get"), ana.testBackupIamPermission(CLUSTER, "b",
          "bigtable.backups.get", "bigtable.backups.delete"));
      assertEquals(List.of(), ana.testBackupIamPermission(CLUSTER, "other", "bigtable.backups.get"));

      // A backup's admin may restore it only with bigtable.tables.create on the instance as well.
      admin.setBackupIamPolicy(CLUSTER, "b", admin.getBackupIamPolicy(CLUSTER, "b").toBuilder().addIdentity(
          Role.of("bigtable.admin"), Identity.user("bo@example.com")).build());
      BigtableTableAdminClient bo = admin(node, "bo");
      bo.updateBackup(UpdateBackupRequest.of(CLUSTER, "b").setExpireTime(week.plusSeconds(60)));
      PermissionDeniedException restore = assertThrows(PermissionDeniedException.class, () -> bo.restoreTable(
          RestoreTableRequest.of(CLUSTER, "b").setTableId("t2")));
      assertTrue(restore.getMessage().contains("bigtable.tables.create"), restore.getMessage());
      admin.restoreTable(RestoreTableRequest.of(CLUSTER, "b").setTableId("t2"));

      // Deleting the backup deletes its policy: a new backup of that id starts with none.
      assertTrue(Files.list(dir.resolve("data/backups/b")).anyMatch(p -> p.getFileName().toString()
          .startsWith("POLICY-")));
      bo.deleteBackup(CLUSTER, "b");
      assertFalse(Files.exists(dir.resolve("data/backups/b")));
      admin.createBackup(CreateBackupRequest.of(CLUSTER, "b").setSourceTableId("t").setExpireTime(week));
      assertTrue(admin.getBackupIamPolicy(CLUSTER, "b").getBindingsList().isEmpty());
      assertThrows(PermissionDeniedException.class, () -> ana.getBackup(CLUSTER, "b"));
      assertThrows(AbortedException.class, () -> admin.setBackupIamPolicy(CLUSTER, "b", granted),
          "an etag of the deleted backup's policy");
    } finally {
      for (AutoCloseable c : clients) {
        c.close();
      }
      node.close();
    }
  }

  private TabulaNode start() throws IOException {
    TestPki ca = TestPki.ca("backup policies test CA");
    caFile = ca.writeCertificate(dir.resolve("ca.crt"));
    ca.issue("CN=node1").write(dir, "node");
    StringBuilder tokens = new StringBuilder();
    TOKENS.forEach((who, token) -> tokens.append("{ principal = \"user:").append(who)
        .append("@example.com\", token = \"").append(token).append("\" }\n"));
    Files.writeString(dir.resolve("auth.conf"), "tabula.security {\n tokens = [\n" + tokens
        + "]\n admins = [\"user:admin@example.com\"]\n}\n");
    Map<String, Object> settings = new HashMap<>();
    settings.put("tabula.node.data-dir", dir.resolve("data").toString());
    settings.put("tabula.node.grpc-port", 0);
    settings.put("tabula.node.http-port", 0);
    settings.put("tabula.node.tls.cert-file", dir.resolve("node.crt").toString());
    settings.put("tabula.node.tls.key-file", dir.resolve("node.key").toString());
    settings.put("tabula.security.auth-file", dir.resolve("auth.conf").toString());
    return TabulaNode.start(ConfigFactory.parseMap(settings));
  }

  private BigtableTableAdminClient admin(TabulaNode node, String who) throws IOException {
    SslContext ssl = GrpcSslContexts.forClient().trustManager(caFile.toFile()).build();
    BigtableTableAdminSettings.Builder b = BigtableTableAdminSettings.newBuilder().setProjectId("p")
        .setInstanceId("i");
    b.stubSettings().setEndpoint("localhost:" + node.grpcPort()).setTransportChannelProvider(
        InstantiatingGrpcChannelProvider.newBuilder().setChannelConfigurator(c -> ((NettyChannelBuilder) c)
            .sslContext(ssl)).build())
        .setCredentialsProvider(FixedCredentialsProvider.create(GoogleCredentials.create(new AccessToken(
            TOKENS.get(who), Date.from(java.time.Instant.parse("2100-01-01T00:00:00Z"))))));
    BigtableTableAdminClient c = BigtableTableAdminClient.create(b.build());
    clients.add(c);
    return c;
  }
}
