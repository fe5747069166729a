package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.conformance.ConformancePeer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.coordination.lease.scaladsl.LeaseProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What can be checked of the Kubernetes profile ({@code config/kubernetes.conf}, used by
 * {@code docs/kubernetes/tabula.yaml}) without Kubernetes, which these machines do not have:
 * the profile parses with the variables the manifest sets; the lease and discovery it names
 * are on the class path and the Kubernetes lease is made from its section; and a node started
 * with it joins through Pekko Management's cluster bootstrap and serves a table. For that
 * last part two things stand in for Kubernetes, and only they: Pekko's config-based discovery
 * for the Kubernetes API, and the file lease for the Kubernetes Lease.
 */
class KubernetesProfileTest {
  private static final Path PROFILE = Path.of("..", "config", "kubernetes.conf");

  @TempDir
  Path dir;

  /** The profile as a pod of the manifest reads it: its variables set as the manifest sets them. */
  private static Config profile() {
    Config env = ConfigFactory.parseMap(Map.of("POD_NAME", "tabula-1", "POD_IP", "127.0.0.1", "TABULA_REPLICAS", "3",
        "TABULA_STORAGE_URI", "hdfs://namenode.hdfs.svc.cluster.local:8020/tabula"));
    return ConfigFactory.parseFile(PROFILE.toFile()).withFallback(env);
  }

  @Test
  void theProfileParsesWithTheManifestsVariablesAndNamesClassesThatExist() throws Exception {
    Config c = TabulaNode.configuration(profile());
    assertEquals("tabula-1", c.getString("tabula.node.name"));
    assertEquals("127.0.0.1", c.getString("tabula.node.host"));
    assertEquals(2552, c.getInt("tabula.node.cluster-port"));
    assertEquals("bootstrap", c.getString("tabula.node.join-by"));
    assertEquals("hdfs://namenode.hdfs.svc.cluster.local:8020/tabula", c.getString("tabula.node.storage-uri"));
    assertEquals(3, c.getInt("pekko.management.cluster.bootstrap.contact-point-discovery.required-contact-point-nr"));
    assertEquals("kubernetes-api",
        c.getString("pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method"));
    Class.forName(c.getString("pekko.discovery.kubernetes-api.class"));
    String leaseClass = c.getString("tabula.master-lease.lease-class");
    assertEquals("org.apache.pekko.coordination.lease.kubernetes.KubernetesLease", leaseClass);
    assertEquals(java.time.Duration.ofSeconds(8), c.getDuration("tabula.master-lease.heartbeat-timeout"));
    assertEquals("tabula.master-journal", c.getString("tabula.master.journal-plugin"),
        "the master's journal is on the storage root (HDFS), fenced by its epochs");

    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "tabula", ConfigFactory.parseMap(Map.of(
        "pekko.actor.provider", "local")).withFallback(c));
    try {
      Object lease = LeaseProvider.get(system).getLease("tabula-master", "tabula.master-lease", "tabula-1");
      assertEquals(leaseClass, lease.getClass().getName(), "the Kubernetes lease is made from the profile's section");
    } finally {
      system.terminate();
    }
  }

  @Test
  void aNodeStartedWithTheProfileFormsItsClusterByBootstrapAndServes() throws Exception {
    int http = freePort();
    Config overrides = ConfigFactory.parseMap(Map.of(
        "tabula.node.data-dir", dir.toString(),
        "tabula.node.storage-uri", "",
        "tabula.node.grpc-port", freePort(),
        "tabula.node.http-port", http,
        "tabula.node.cluster-port", freePort(),
        "tabula.master-lease.lease-class", "io.tabula.actors.lease.FileLease",
        "pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method", "config",
        "pekko.management.cluster.bootstrap.contact-point-discovery.required-contact-point-nr", 1,
        "pekko.management.cluster.bootstrap.contact-point-discovery.stable-margin", "1s"))
        .withFallback(ConfigFactory.parseString("pekko.discovery.config.services.tabula.endpoints = "
            + "[{host = \"127.0.0.1\", port = " + http + "}]"));
    try (TabulaNode node = TabulaNode.start(overrides.withFallback(profile()))) {
      assertEquals("tabula-1", node.system().settings().config().getString("tabula.node.name"));
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(
              ConformancePeer.adminSettings(node.grpcPort()));
          BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
        admin.createTable(CreateTableRequest.of("k8s").addFamily("f"));
        data.mutateRow(RowMutation.create(TableId.of("k8s"), "r1").setCell("f", "q", "v"));
        Row row = data.readRow(TableId.of("k8s"), "r1");
        assertTrue(row != null && row.getCells().get(0).getValue().toStringUtf8().equals("v"));
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
