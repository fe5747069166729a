package io.tabula.cluster.security;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The permission each gRPC method of the node's services needs, by request path, as Cloud
 * Bigtable's IAM defines it: a data call on a table needs {@code bigtable.tables.X}, the same
 * call on an authorized view {@code bigtable.authorizedViews.X}. Tabula's own services
 * (Locations, LocalityGroups) need what the Bigtable call closest to them needs. Immutable.
 */
public final class MethodPermissions {
  /**
   * What a method needs: on a table (or the instance), on an authorized view when the request
   * names one, on a backup when it names one, and, whatever it names, on the instance as well
   * (RestoreTable makes a table: Cloud Bigtable asks {@code bigtable.tables.create} of the
   * instance besides {@code bigtable.backups.restore} of the backup).
   */
  public record Needed(String permission, Optional<String> onView, Optional<String> onBackup,
      Optional<String> alsoOnInstance) {
    public Needed(String permission, Optional<String> onView) {
      this(permission, onView, Optional.empty(), Optional.empty());
    }
  }

  private static final String DATA = "/google.bigtable.v2.Bigtable/";
  private static final String ADMIN = "/google.bigtable.admin.v2.BigtableTableAdmin/";
  private static final String INSTANCE_ADMIN = "/google.bigtable.admin.v2.BigtableInstanceAdmin/";
  private static final Map<String, Needed> BY_PATH = build();

  private MethodPermissions() {}

  /** What the method at {@code path} needs; empty for a path that is no method of the node's services. */
  public static Optional<Needed> of(String path) {
    return Optional.ofNullable(BY_PATH.get(path));
  }

  private static Map<String, Needed> build() {
    Map<String, Needed> m = new HashMap<>();
    data(m, "ReadRows", "readRows");
    data(m, "SampleRowKeys", "sampleRowKeys");
    data(m, "MutateRow", "mutateRows");
    data(m, "MutateRows", "mutateRows");
    data(m, "CheckAndMutateRow", "mutateRows");
    data(m, "ReadModifyWriteRow", "mutateRows");
    m.put(DATA + "PingAndWarm", new Needed("bigtable.instances.ping", Optional.empty()));
    // Cloud Bigtable documents no permission of their own for change streams: reading them is reading rows.
    m.put(DATA + "GenerateInitialChangeStreamPartitions", table("readRows"));
    m.put(DATA + "ReadChangeStream", table("readRows"));
    m.put(DATA + "PrepareQuery", new Needed("bigtable.instances.executeQuery", Optional.empty()));
    m.put(DATA + "ExecuteQuery", new Needed("bigtable.instances.executeQuery", Optional.empty()));
    m.put(DATA + "GetClientConfiguration", new Needed("bigtable.instances.ping", Optional.empty()));
    // The session RPCs (not served: UNIMPLEMENTED, to a caller who may read).
    data(m, "OpenTable", "readRows");
    data(m, "OpenAuthorizedView", "readRows");
    m.put(DATA + "OpenMaterializedView", table("readRows"));
    admin(m, "CreateTable", "bigtable.tables.create");
    admin(m, "CreateTableFromSnapshot", "bigtable.tables.create");
    admin(m, "ListTables", "bigtable.tables.list");
    admin(m, "GetTable", "bigtable.tables.get");
    admin(m, "UpdateTable", "bigtable.tables.update");
    admin(m, "DeleteTable", "bigtable.tables.delete");
    admin(m, "UndeleteTable", "bigtable.tables.undelete");
    admin(m, "ModifyColumnFamilies", "bigtable.tables.update");
    admin(m, "DropRowRange", "bigtable.tables.mutateRows");
    admin(m, "GenerateConsistencyToken", "bigtable.tables.generateConsistencyToken");
    admin(m, "CheckConsistency", "bigtable.tables.checkConsistency");
    admin(m, "CreateAuthorizedView", "bigtable.authorizedViews.create");
    admin(m, "ListAuthorizedViews", "bigtable.authorizedViews.list");
    admin(m, "GetAuthorizedView", "bigtable.authorizedViews.get");
    admin(m, "UpdateAuthorizedView", "bigtable.authorizedViews.update");
    admin(m, "DeleteAuthorizedView", "bigtable.authorizedViews.delete");
    admin(m, "SnapshotTable", "bigtable.tables.create");
    admin(m, "GetSnapshot", "bigtable.tables.get");
    admin(m, "ListSnapshots", "bigtable.tables.list");
    admin(m, "DeleteSnapshot", "bigtable.tables.delete");
    admin(m, "CreateBackup", "bigtable.backups.create");
    admin(m, "GetBackup", "bigtable.backups.get");
    admin(m, "UpdateBackup", "bigtable.backups.update");
    admin(m, "DeleteBackup", "bigtable.backups.delete");
    admin(m, "ListBackups", "bigtable.backups.list");
    m.put(ADMIN + "RestoreTable", new Needed("bigtable.backups.restore", Optional.empty(), Optional.empty(),
        Optional.of("bigtable.tables.create")));
    // Cloud Bigtable asks backups.read of the source backup; here the instance's policy must hold both.
    m.put(ADMIN + "CopyBackup", new Needed("bigtable.backups.create", Optional.empty(), Optional.empty(),
        Optional.of("bigtable.backups.read")));
    // The resource decides between tables, authorized views and backups; a table's is the default.
    m.put(ADMIN + "GetIamPolicy", new Needed("bigtable.tables.getIamPolicy",
        Optional.of("bigtable.authorizedViews.getIamPolicy"), Optional.of("bigtable.backups.getIamPolicy"),
        Optional.empty()));
    m.put(ADMIN + "SetIamPolicy", new Needed("bigtable.tables.setIamPolicy",
        Optional.of("bigtable.authorizedViews.setIamPolicy"), Optional.of("bigtable.backups.setIamPolicy"),
        Optional.empty()));
    // Anyone authenticated may ask which of the permissions they name they hold (as in Cloud IAM).
    m.put(ADMIN + "TestIamPermissions", new Needed("", Optional.of("")));
    admin(m, "CreateSchemaBundle", "bigtable.schemaBundles.create");
    admin(m, "UpdateSchemaBundle", "bigtable.schemaBundles.update");
    admin(m, "GetSchemaBundle", "bigtable.schemaBundles.get");
    admin(m, "ListSchemaBundles", "bigtable.schemaBundles.list");
    admin(m, "DeleteSchemaBundle", "bigtable.schemaBundles.delete");
    instanceAdmin(m, "CreateInstance", "bigtable.instances.create");
    instanceAdmin(m, "GetInstance", "bigtable.instances.get");
    instanceAdmin(m, "ListInstances", "bigtable.instances.list");
    instanceAdmin(m, "UpdateInstance", "bigtable.instances.update");
    instanceAdmin(m, "PartialUpdateInstance", "bigtable.instances.update");
    instanceAdmin(m, "DeleteInstance", "bigtable.instances.delete");
    instanceAdmin(m, "CreateCluster", "bigtable.clusters.create");
    instanceAdmin(m, "GetCluster", "bigtable.clusters.get");
    instanceAdmin(m, "ListClusters", "bigtable.clusters.list");
    instanceAdmin(m, "UpdateCluster", "bigtable.clusters.update");
    instanceAdmin(m, "PartialUpdateCluster", "bigtable.clusters.update");
    instanceAdmin(m, "DeleteCluster", "bigtable.clusters.delete");
    instanceAdmin(m, "CreateAppProfile", "bigtable.appProfiles.create");
    instanceAdmin(m, "GetAppProfile", "bigtable.appProfiles.get");
    instanceAdmin(m, "ListAppProfiles", "bigtable.appProfiles.list");
    instanceAdmin(m, "UpdateAppProfile", "bigtable.appProfiles.update");
    instanceAdmin(m, "DeleteAppProfile", "bigtable.appProfiles.delete");
    instanceAdmin(m, "GetIamPolicy", "bigtable.instances.getIamPolicy");
    instanceAdmin(m, "SetIamPolicy", "bigtable.instances.setIamPolicy");
    instanceAdmin(m, "TestIamPermissions", "");
    instanceAdmin(m, "ListHotTablets", "bigtable.hotTablets.list");
    for (String kind : new String[] {"LogicalView", "MaterializedView"}) {
      String resource = "bigtable." + Character.toLowerCase(kind.charAt(0)) + kind.substring(1) + "s.";
      instanceAdmin(m, "Create" + kind, resource + "create");
      instanceAdmin(m, "Get" + kind, resource + "get");
      instanceAdmin(m, "List" + kind + "s", resource + "list");
      instanceAdmin(m, "Update" + kind, resource + "update");
      instanceAdmin(m, "Delete" + kind, resource + "delete");
    }
    // The operations the table admin answers are done when answered: looking at one is reading the instance.
    for (String rpc : new String[] {"ListOperations", "GetOperation", "DeleteOperation", "CancelOperation",
        "WaitOperation"}) {
      m.put("/google.longrunning.Operations/" + rpc, new Needed("bigtable.instances.get", Optional.empty()));
    }
    m.put("/tabula.v1.Locations/Locate", table("sampleRowKeys"));
    m.put("/tabula.v1.LocalityGroups/GetLocalityGroups", new Needed("bigtable.tables.get", Optional.empty()));
    m.put("/tabula.v1.LocalityGroups/SetLocalityGroup", new Needed("bigtable.tables.update", Optional.empty()));
    return Map.copyOf(m);
  }

  private static void data(Map<String, Needed> m, String method, String action) {
    m.put(DATA + method, new Needed("bigtable.tables." + action, Optional.of("bigtable.authorizedViews." + action)));
  }

  private static Needed table(String action) {
    return new Needed("bigtable.tables." + action, Optional.empty());
  }

  private static void instanceAdmin(Map<String, Needed> m, String method, String permission) {
    m.put(INSTANCE_ADMIN + method, new Needed(permission, Optional.empty()));
  }

  private static void admin(Map<String, Needed> m, String method, String permission) {
    m.put(ADMIN + method, new Needed(permission, Optional.empty()));
  }
}
