package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.AppProfile;
import com.google.bigtable.admin.v2.BigtableInstanceAdmin;
import com.google.bigtable.admin.v2.Cluster;
import com.google.bigtable.admin.v2.CreateAppProfileRequest;
import com.google.bigtable.admin.v2.CreateClusterRequest;
import com.google.bigtable.admin.v2.CreateInstanceRequest;
import com.google.bigtable.admin.v2.CreateLogicalViewRequest;
import com.google.bigtable.admin.v2.CreateMaterializedViewRequest;
import com.google.bigtable.admin.v2.DeleteAppProfileRequest;
import com.google.bigtable.admin.v2.DeleteClusterRequest;
import com.google.bigtable.admin.v2.DeleteInstanceRequest;
import com.google.bigtable.admin.v2.DeleteLogicalViewRequest;
import com.google.bigtable.admin.v2.DeleteMaterializedViewRequest;
import com.google.bigtable.admin.v2.GetAppProfileRequest;
import com.google.bigtable.admin.v2.GetClusterRequest;
import com.google.bigtable.admin.v2.GetInstanceRequest;
import com.google.bigtable.admin.v2.GetLogicalViewRequest;
import com.google.bigtable.admin.v2.GetMaterializedViewRequest;
import com.google.bigtable.admin.v2.Instance;
import com.google.bigtable.admin.v2.ListAppProfilesRequest;
import com.google.bigtable.admin.v2.ListAppProfilesResponse;
import com.google.bigtable.admin.v2.ListClustersRequest;
import com.google.bigtable.admin.v2.ListClustersResponse;
import com.google.bigtable.admin.v2.ListHotTabletsRequest;
import com.google.bigtable.admin.v2.ListHotTabletsResponse;
import com.google.bigtable.admin.v2.ListInstancesRequest;
import com.google.bigtable.admin.v2.ListInstancesResponse;
import com.google.bigtable.admin.v2.ListLogicalViewsRequest;
import com.google.bigtable.admin.v2.ListLogicalViewsResponse;
import com.google.bigtable.admin.v2.ListMaterializedViewsRequest;
import com.google.bigtable.admin.v2.ListMaterializedViewsResponse;
import com.google.bigtable.admin.v2.LogicalView;
import com.google.bigtable.admin.v2.MaterializedView;
import com.google.bigtable.admin.v2.PartialUpdateClusterRequest;
import com.google.bigtable.admin.v2.PartialUpdateInstanceRequest;
import com.google.bigtable.admin.v2.StorageType;
import com.google.bigtable.admin.v2.UpdateAppProfileRequest;
import com.google.bigtable.admin.v2.UpdateLogicalViewRequest;
import com.google.bigtable.admin.v2.UpdateMaterializedViewRequest;
import com.google.iam.v1.GetIamPolicyRequest;
import com.google.iam.v1.Policy;
import com.google.iam.v1.SetIamPolicyRequest;
import com.google.iam.v1.TestIamPermissionsRequest;
import com.google.iam.v1.TestIamPermissionsResponse;
import com.google.longrunning.Operation;
import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import com.typesafe.config.Config;
import io.tabula.protocol.errors.ErrorCode;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cloud Bigtable's instance admin API as one Tabula cluster answers it: one instance, with
 * one cluster ({@code tabula.instance.cluster-id}) whose serve nodes are the cluster's Up
 * members, and the {@code default} app profile routing to it. Every instance name reaches the
 * same tables (as on the data and table-admin APIs), so {@code GetInstance} answers any
 * well-formed name and lists the clusters and app profile under it; {@code ListInstances}
 * lists {@code tabula.instance.id}. What Tabula cannot honour (creating, changing or deleting
 * instances, clusters and app profiles; SQL views; hot-tablet figures; an instance policy set
 * through the API, which is the auth file's) is FAILED_PRECONDITION naming what is not
 * supported. The instance's policy is read from the node's security settings. Stateless
 * apart from its settings; thread-safe.
 */
final class InstanceAdminService implements BigtableInstanceAdmin {
  private static final Pattern PROJECT = Pattern.compile("projects/([^/]+)");
  private static final Pattern INSTANCE = Pattern.compile("(projects/[^/]+)/instances/([^/]+)");
  private static final String INSTANCE_FORM = "projects/{project}/instances/{instance}";
  static final String DEFAULT_APP_PROFILE = "default";

  private final String instanceId;
  private final String displayName;
  private final String clusterId;
  private final String location;
  private final IntSupplier upMembers;
  private final Supplier<Policy> instancePolicy;

  /**
   * @param instance the {@code tabula.instance} settings
   * @param upMembers how many members of the cluster are Up now
   * @param instancePolicy the instance's IAM policy (the auth file's admins and bindings)
   */
  InstanceAdminService(Config instance, IntSupplier upMembers, Supplier<Policy> instancePolicy) {
    this.instanceId = instance.getString("id");
    this.displayName = instance.getString("display-name");
    this.clusterId = instance.getString("cluster-id");
    this.location = instance.getString("location");
    this.upMembers = upMembers;
    this.instancePolicy = instancePolicy;
  }

  // ---- the instance

  @Override
  public CompletionStage<Instance> getInstance(GetInstanceRequest in) {
    return answer(() -> instance(instanceName("name", in.getName())));
  }

  @Override
  public CompletionStage<ListInstancesResponse> listInstances(ListInstancesRequest in) {
    return answer(() -> {
      String project = project("parent", in.getParent());
      firstPage("page_token", in.getPageToken());
      return ListInstancesResponse.newBuilder().addInstances(instance(project + "/instances/" + instanceId)).build();
    });
  }

  @Override
  public CompletionStage<Operation> createInstance(CreateInstanceRequest in) {
    return refuse(() -> {
      project("parent", in.getParent());
      return "a Tabula cluster serves one instance; instances are not created through the API";
    });
  }

  @Override
  public CompletionStage<Instance> updateInstance(Instance in) {
    return refuse(() -> {
      instanceName("name", in.getName());
      return "the instance's settings are the nodes' tabula.instance settings, not changed through the API";
    });
  }

  @Override
  public CompletionStage<Operation> partialUpdateInstance(PartialUpdateInstanceRequest in) {
    return refuse(() -> {
      instanceName("instance.name", in.getInstance().getName());
      return "the instance's settings are the nodes' tabula.instance settings, not changed through the API";
    });
  }

  @Override
  public CompletionStage<Empty> deleteInstance(DeleteInstanceRequest in) {
    return refuse(() -> {
      instanceName("name", in.getName());
      return "a Tabula cluster serves one instance, which is not deleted through the API";
    });
  }

  // ---- the cluster

  @Override
  public CompletionStage<Cluster> getCluster(GetClusterRequest in) {
    return answer(() -> {
      Child c = child("name", in.getName(), "clusters");
      if (!c.id().equals(clusterId)) {
        throw GrpcErrors.notFound("cluster '" + c.id() + "' not found: this instance's one cluster is '" + clusterId
            + "'");
      }
      return cluster(c.instance());
    });
  }

  @Override
  public CompletionStage<ListClustersResponse> listClusters(ListClustersRequest in) {
    return answer(() -> {
      String instance = instanceOrAll("parent", in.getParent());
      firstPage("page_token", in.getPageToken());
      return ListClustersResponse.newBuilder().addClusters(cluster(instance)).build();
    });
  }

  @Override
  public CompletionStage<Operation> createCluster(CreateClusterRequest in) {
    return refuse(() -> {
      instanceName("parent", in.getParent());
      return "a Tabula instance has one cluster; it grows by starting nodes that join it (docs/deploy.md)";
    });
  }

  @Override
  public CompletionStage<Operation> updateCluster(Cluster in) {
    return refuse(() -> {
      child("name", in.getName(), "clusters");
      return "a cluster's serve nodes are its members: start or stop nodes to change them (docs/deploy.md)";
    });
  }

  @Override
  public CompletionStage<Operation> partialUpdateCluster(PartialUpdateClusterRequest in) {
    return refuse(() -> {
      child("cluster.name", in.getCluster().getName(), "clusters");
      return "a cluster's serve nodes are its members: start or stop nodes to change them (docs/deploy.md)";
    });
  }

  @Override
  public CompletionStage<Empty> deleteCluster(DeleteClusterRequest in) {
    return refuse(() -> {
      child("name", in.getName(), "clusters");
      return "a Tabula instance has one cluster, which is not deleted through the API";
    });
  }

  // ---- app profiles

  @Override
  public CompletionStage<AppProfile> getAppProfile(GetAppProfileRequest in) {
    return answer(() -> {
      Child c = child("name", in.getName(), "appProfiles");
      if (!c.id().equals(DEFAULT_APP_PROFILE)) {
        throw GrpcErrors.notFound("app profile '" + c.id() + "' not found: Tabula has only the 'default' one");
      }
      return appProfile(c.instance());
    });
  }

  @Override
  public CompletionStage<ListAppProfilesResponse> listAppProfiles(ListAppProfilesRequest in) {
    return answer(() -> {
      String instance = instanceOrAll("parent", in.getParent());
      pageSize("page_size", in.getPageSize());
      firstPage("page_token", in.getPageToken());
      return ListAppProfilesResponse.newBuilder().addAppProfiles(appProfile(instance)).build();
    });
  }

  @Override
  public CompletionStage<AppProfile> createAppProfile(CreateAppProfileRequest in) {
    return refuse(() -> {
      instanceName("parent", in.getParent());
      return "Tabula has only the 'default' app profile; app profiles are not created";
    });
  }

  @Override
  public CompletionStage<Operation> updateAppProfile(UpdateAppProfileRequest in) {
    return refuse(() -> {
      child("app_profile.name", in.getAppProfile().getName(), "appProfiles");
      return "Tabula's 'default' app profile routes to its one cluster and is not changed";
    });
  }

  @Override
  public CompletionStage<Empty> deleteAppProfile(DeleteAppProfileRequest in) {
    return refuse(() -> {
      child("name", in.getName(), "appProfiles");
      return "Tabula's 'default' app profile is not deleted";
    });
  }

  // ---- the instance's policy

  @Override
  public CompletionStage<Policy> getIamPolicy(GetIamPolicyRequest in) {
    return answer(() -> {
      instanceName("resource", in.getResource());
      return instancePolicy.get().toBuilder().setVersion(1).setEtag(ByteString.copyFromUtf8("auth-file")).build();
    });
  }

  @Override
  public CompletionStage<Policy> setIamPolicy(SetIamPolicyRequest in) {
    return refuse(() -> {
      instanceName("resource", in.getResource());
      return "the instance's policy is the nodes' auth file (tabula.security admins and bindings,"
          + " docs/security.md); set tables' and authorized views' policies through the table admin API";
    });
  }

  /** Reached only over gRPC-Web: over gRPC the node answers it in front, where it knows the caller. */
  @Override
  public CompletionStage<TestIamPermissionsResponse> testIamPermissions(TestIamPermissionsRequest in) {
    return CompletableFuture.failedFuture(GrpcErrors.unimplemented("TestIamPermissions over gRPC-Web"));
  }

  // ---- not measured, not served

  @Override
  public CompletionStage<ListHotTabletsResponse> listHotTablets(ListHotTabletsRequest in) {
    return refuse(() -> {
      child("parent", in.getParent(), "clusters");
      return "Tabula does not measure tablets' CPU use; the key visualizer (/tabula/keyviz on Management HTTP)"
          + " shows where reads and writes go";
    });
  }

  @Override
  public CompletionStage<Operation> createLogicalView(CreateLogicalViewRequest in) {
    return refuse(() -> {
      instanceName("parent", in.getParent());
      return noSql("logical views");
    });
  }

  @Override
  public CompletionStage<LogicalView> getLogicalView(GetLogicalViewRequest in) {
    return answer(() -> {
      throw GrpcErrors.notFound(missing(child("name", in.getName(), "logicalViews"), "logical view"));
    });
  }

  @Override
  public CompletionStage<ListLogicalViewsResponse> listLogicalViews(ListLogicalViewsRequest in) {
    return answer(() -> {
      instanceOrAll("parent", in.getParent());
      pageSize("page_size", in.getPageSize());
      firstPage("page_token", in.getPageToken());
      return ListLogicalViewsResponse.getDefaultInstance();
    });
  }

  @Override
  public CompletionStage<Operation> updateLogicalView(UpdateLogicalViewRequest in) {
    return answer(() -> {
      throw GrpcErrors.notFound(missing(child("logical_view.name", in.getLogicalView().getName(), "logicalViews"),
          "logical view"));
    });
  }

  @Override
  public CompletionStage<Empty> deleteLogicalView(DeleteLogicalViewRequest in) {
    return answer(() -> {
      throw GrpcErrors.notFound(missing(child("name", in.getName(), "logicalViews"), "logical view"));
    });
  }

  @Override
  public CompletionStage<Operation> createMaterializedView(CreateMaterializedViewRequest in) {
    return refuse(() -> {
      instanceName("parent", in.getParent());
      return noSql("materialized views");
    });
  }

  @Override
  public CompletionStage<MaterializedView> getMaterializedView(GetMaterializedViewRequest in) {
    return answer(() -> {
      throw GrpcErrors.notFound(missing(child("name", in.getName(), "materializedViews"), "materialized view"));
    });
  }

  @Override
  public CompletionStage<ListMaterializedViewsResponse> listMaterializedViews(ListMaterializedViewsRequest in) {
    return answer(() -> {
      instanceOrAll("parent", in.getParent());
      pageSize("page_size", in.getPageSize());
      firstPage("page_token", in.getPageToken());
      return ListMaterializedViewsResponse.getDefaultInstance();
    });
  }

  @Override
  public CompletionStage<Operation> updateMaterializedView(UpdateMaterializedViewRequest in) {
    return answer(() -> {
      throw GrpcErrors.notFound(missing(child("materialized_view.name", in.getMaterializedView().getName(),
          "materializedViews"), "materialized view"));
    });
  }

  @Override
  public CompletionStage<Empty> deleteMaterializedView(DeleteMaterializedViewRequest in) {
    return answer(() -> {
      throw GrpcErrors.notFound(missing(child("name", in.getName(), "materializedViews"), "materialized view"));
    });
  }

  // ---- what the answers are made of

  private Instance instance(String name) {
    return Instance.newBuilder()
        .setName(name)
        .setDisplayName(displayName)
        .setState(Instance.State.READY)
        .setType(Instance.Type.PRODUCTION)
        .setEdition(Instance.Edition.ENTERPRISE)
        .build();
  }

  private Cluster cluster(String instance) {
    String project = instance.substring(0, instance.indexOf("/instances/"));
    return Cluster.newBuilder()
        .setName(instance + "/clusters/" + clusterId)
        .setLocation(project + "/locations/" + location)
        .setState(Cluster.State.READY)
        .setServeNodes(upMembers.getAsInt())
        .setNodeScalingFactor(Cluster.NodeScalingFactor.NODE_SCALING_FACTOR_1X)
        .setDefaultStorageType(StorageType.SSD)
        .build();
  }

  private AppProfile appProfile(String instance) {
    return AppProfile.newBuilder()
        .setName(instance + "/appProfiles/" + DEFAULT_APP_PROFILE)
        .setEtag(DEFAULT_APP_PROFILE)
        .setDescription("Tabula's one app profile: every call goes to the instance's one cluster")
        .setSingleClusterRouting(AppProfile.SingleClusterRouting.newBuilder().setClusterId(clusterId)
            .setAllowTransactionalWrites(true))
        .setStandardIsolation(AppProfile.StandardIsolation.newBuilder()
            .setPriority(AppProfile.Priority.PRIORITY_HIGH))
        .build();
  }

  /** A resource under an instance: {@code INSTANCE/collection/id}. */
  private record Child(String instance, String id) {}

  private static Child child(String field, String name, String collection) {
    Matcher m = Pattern.compile("(projects/[^/]+/instances/[^/]+)/" + collection + "/([^/]+)").matcher(name);
    if (!m.matches()) {
      throw GrpcErrors.invalid(field, "'" + name + "' is not a name of the form " + INSTANCE_FORM + "/" + collection
          + "/{id}");
    }
    return new Child(m.group(1), m.group(2));
  }

  private static String instanceName(String field, String name) {
    if (!INSTANCE.matcher(name).matches()) {
      throw GrpcErrors.invalid(field, "'" + name + "' is not an instance name of the form " + INSTANCE_FORM);
    }
    return name;
  }

  /** An instance name, where {@code -} (every instance) stands for this one. */
  private String instanceOrAll(String field, String name) {
    String instance = instanceName(field, name);
    return instance.endsWith("/instances/-") ? instance.substring(0, instance.length() - 1) + instanceId : instance;
  }

  private static String project(String field, String name) {
    if (!PROJECT.matcher(name).matches()) {
      throw GrpcErrors.invalid(field, "'" + name + "' is not a project name of the form projects/{project}");
    }
    return name;
  }

  private static void pageSize(String field, int size) {
    if (size < 0) {
      throw GrpcErrors.invalid(field, "must not be negative, was " + size);
    }
  }

  /** Every list here fits one page, so the only page token is the first page's (empty). */
  private static void firstPage(String field, String token) {
    if (!token.isEmpty()) {
      throw GrpcErrors.invalid(field, "not a page token this node gave (every list here fits one page)");
    }
  }

  private static String missing(Child c, String what) {
    return what + " '" + c.id() + "' not found: Tabula has no " + what + "s";
  }

  private static String noSql(String what) {
    return "Tabula does not serve SQL, so it has no " + what;
  }

  private static <T> CompletionStage<T> answer(Supplier<T> body) {
    return GrpcErrors.unary(() -> CompletableFuture.completedFuture(body.get()));
  }

  /** FAILED_PRECONDITION with the reason {@code check} gives after checking the request's names. */
  private static <T> CompletionStage<T> refuse(Supplier<String> check) {
    return GrpcErrors.unary(() -> {
      throw GrpcErrors.status(ErrorCode.FAILED_PRECONDITION, check.get() + " (not supported by Tabula)", null);
    });
  }
}
