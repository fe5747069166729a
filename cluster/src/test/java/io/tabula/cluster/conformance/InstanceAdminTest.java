package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.FailedPreconditionException;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.api.gax.rpc.PermissionDeniedException;
import com.google.bigtable.admin.v2.GetClusterRequest;
import com.google.bigtable.admin.v2.GetInstanceRequest;
import com.google.bigtable.admin.v2.ListAppProfilesRequest;
import com.google.bigtable.admin.v2.ListInstancesRequest;
import com.google.cloud.Policy;
import com.google.cloud.bigtable.admin.v2.BaseBigtableInstanceAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableInstanceAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableInstanceAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.AppProfile;
import com.google.cloud.bigtable.admin.v2.models.Cluster;
import com.google.cloud.bigtable.admin.v2.models.CreateAppProfileRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateClusterRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateInstanceRequest;
import com.google.cloud.bigtable.admin.v2.models.Instance;
import com.google.cloud.bigtable.admin.v2.models.StorageType;
import io.tabula.cluster.TabulaNode;
import io.tabula.cluster.security.SecuredNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official Java instance-admin client against a node: the one instance (under any
 * instance name, as the data API answers every one), its one cluster with the node as its
 * serve node, the default app profile; changes it cannot honour refused with
 * FAILED_PRECONDITION saying what is not supported; malformed names INVALID_ARGUMENT naming the
 * field; and, on a secured node, the roles deciding who may look.
 */
class InstanceAdminTest {
  @TempDir
  Path dir;

  @Test
  void theOneInstanceClusterAndAppProfile() throws Exception {
    try (TabulaNode node = TabulaNode.start(dir, 0, 0);
        BigtableInstanceAdminClient admin = BigtableInstanceAdminClient.create(BigtableInstanceAdminSettings
            .newBuilderForEmulator(ConformancePeer.LOOPBACK, node.grpcPort()).setProjectId("p").build())) {
      Instance instance = admin.getInstance("my-instance");
      assertEquals("my-instance", instance.getId());
      assertEquals("Tabula", instance.getDisplayName());
      assertEquals(Instance.State.READY, instance.getState());
      assertEquals(Instance.Type.PRODUCTION, instance.getType());
      assertTrue(admin.exists("any-other"));
      List<Instance> all = admin.listInstances();
      assertEquals(1, all.size());
      assertEquals("tabula", all.get(0).getId());

      Cluster cluster = admin.getCluster("my-instance", "tabula");
      assertEquals(1, cluster.getServeNodes());
      assertEquals("local", cluster.getZone());
      assertEquals(Cluster.State.READY, cluster.getState());
      assertEquals(StorageType.SSD, cluster.getStorageType());
      assertEquals(List.of("tabula"), admin.listClusters("my-instance").stream().map(Cluster::getId).toList());
      NotFoundException noCluster = assertThrows(NotFoundException.class, () -> admin.getCluster("my-instance", "c2"));
      assertTrue(noCluster.getMessage().contains("'c2' not found"), noCluster.getMessage());

      AppProfile profile = admin.getAppProfile("my-instance", "default");
      assertEquals("default", profile.getId());
      assertEquals("tabula",
          ((AppProfile.SingleClusterRoutingPolicy) profile.getPolicy()).getClusterId());
      assertEquals(1, admin.listAppProfiles("my-instance").size());
      assertThrows(NotFoundException.class, () -> admin.getAppProfile("my-instance", "batch"));

      assertTrue(admin.listLogicalViews("my-instance").isEmpty());
      assertTrue(admin.listMaterializedViews("my-instance").isEmpty());
      assertThrows(NotFoundException.class, () -> admin.getLogicalView("my-instance", "v"));
      assertThrows(NotFoundException.class, () -> admin.getMaterializedView("my-instance", "v"));

      Policy policy = admin.getIamPolicy("my-instance");
      assertTrue(policy.getBindings().isEmpty(), policy.toString());

      for (ApiException refused : List.of(
          assertThrows(FailedPreconditionException.class, () -> admin.createInstance(
              CreateInstanceRequest.of("second").addCluster("c1", "local", 1, StorageType.SSD))),
          assertThrows(FailedPreconditionException.class, () -> admin.deleteInstance("my-instance")),
          assertThrows(FailedPreconditionException.class, () -> admin.createCluster(
              CreateClusterRequest.of("my-instance", "c2").setZone("local").setServeNodes(1))),
          assertThrows(FailedPreconditionException.class, () -> admin.resizeCluster("my-instance", "tabula", 3)),
          assertThrows(FailedPreconditionException.class, () -> admin.deleteCluster("my-instance", "tabula")),
          assertThrows(FailedPreconditionException.class, () -> admin.createAppProfile(
              CreateAppProfileRequest.of("my-instance", "batch").setRoutingPolicy(
                  AppProfile.SingleClusterRoutingPolicy.of("tabula")))),
          assertThrows(FailedPreconditionException.class, () -> admin.deleteAppProfile("my-instance", "default")),
          assertThrows(FailedPreconditionException.class, () -> admin.setIamPolicy("my-instance", policy)))) {
        assertTrue(refused.getMessage().contains("not supported by Tabula"), refused.getMessage());
      }
      // After all that, still one instance with one cluster of one node.
      assertEquals(1, admin.getCluster("my-instance", "tabula").getServeNodes());
    }
  }

  @Test
  void malformedNamesAreInvalidArgumentsNamingTheField() throws Exception {
    try (TabulaNode node = TabulaNode.start(dir, 0, 0);
        BigtableInstanceAdminClient admin = BigtableInstanceAdminClient.create(BigtableInstanceAdminSettings
            .newBuilderForEmulator(ConformancePeer.LOOPBACK, node.grpcPort()).setProjectId("p").build())) {
      // The generated client sends the requests as they are.
      BaseBigtableInstanceAdminClient raw = admin.getBaseClient();
      Map<String, Runnable> calls = Map.of(
          "name", () -> raw.getInstance(GetInstanceRequest.newBuilder().setName("projects/p").build()),
          "parent", () -> raw.listInstances(ListInstancesRequest.newBuilder().setParent("p").build()),
          "name ", () -> raw.getCluster(GetClusterRequest.newBuilder().setName("projects/p/instances/i").build()),
          "page_token", () -> raw.listAppProfiles(ListAppProfilesRequest.newBuilder()
              .setParent("projects/p/instances/i").setPageToken("next").build()),
          "page_size", () -> raw.listAppProfiles(ListAppProfilesRequest.newBuilder()
              .setParent("projects/p/instances/i").setPageSize(-1).build()));
      calls.forEach((field, call) -> {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call::run, field);
        assertTrue(e.getMessage().contains(field.trim() + ": "), e.getMessage());
      });
    }
  }

  @Test
  void onASecuredNodeTheRolesDecide() throws Exception {
    String adminToken = "instance-admin-token-0123456789";
    String otherToken = "instance-other-token-0123456789";
    try (SecuredNode node = SecuredNode.start(dir, Map.of("user:ana@example.com", adminToken,
        "user:bo@example.com", otherToken), "user:ana@example.com");
        BigtableInstanceAdminClient admin = BigtableInstanceAdminClient.create(TlsClients.instanceAdmin(
            node.node().grpcPort(), node.caFile(), TlsClients.token(adminToken)).build());
        BigtableInstanceAdminClient other = BigtableInstanceAdminClient.create(TlsClients.instanceAdmin(
            node.node().grpcPort(), node.caFile(), TlsClients.token(otherToken)).build())) {
      assertEquals("i", admin.getInstance("i").getId());
      Policy policy = admin.getIamPolicy("i");
      assertTrue(policy.getBindings().toString().contains("user:ana@example.com"), policy.toString());
      PermissionDeniedException denied = assertThrows(PermissionDeniedException.class, () -> other.getInstance("i"));
      assertTrue(denied.getMessage().contains("bigtable.instances.get"), denied.getMessage());
      assertThrows(PermissionDeniedException.class, () -> other.createAppProfile(CreateAppProfileRequest.of("i",
          "batch").setRoutingPolicy(AppProfile.SingleClusterRoutingPolicy.of("tabula"))));
      assertThrows(FailedPreconditionException.class, () -> admin.createAppProfile(CreateAppProfileRequest.of("i",
          "batch").setRoutingPolicy(AppProfile.SingleClusterRoutingPolicy.of("tabula"))));
      assertEquals(List.of("bigtable.instances.get", "bigtable.clusters.update"), admin.testIamPermission("i",
          "bigtable.instances.get", "bigtable.clusters.update"));
      assertEquals(List.of(), other.testIamPermission("i", "bigtable.instances.get"));
    }
  }
}
