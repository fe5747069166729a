package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.admin.v2.BigtableInstanceAdminProto;
import com.google.bigtable.admin.v2.BigtableTableAdminProto;
import com.google.bigtable.v2.BigtableProto;
import com.google.protobuf.Descriptors;
import io.tabula.protocol.groups.LocalityGroupsProto;
import io.tabula.protocol.locations.LocationsProto;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every method of the node's services needs a permission an admin has, and the roles nest as Cloud Bigtable's do. */
class MethodPermissionsTest {
  private static final List<Descriptors.ServiceDescriptor> SERVICES = List.of(
      BigtableProto.getDescriptor().findServiceByName("Bigtable"),
      BigtableTableAdminProto.getDescriptor().findServiceByName("BigtableTableAdmin"),
      BigtableInstanceAdminProto.getDescriptor().findServiceByName("BigtableInstanceAdmin"),
      com.google.longrunning.OperationsProto.getDescriptor().findServiceByName("Operations"),
      LocationsProto.getDescriptor().getServices().get(0),
      LocalityGroupsProto.getDescriptor().getServices().get(0));

  @Test
  void everyMethodNeedsAPermissionOfARole() {
    for (Descriptors.ServiceDescriptor s : SERVICES) {
      for (Descriptors.MethodDescriptor m : s.getMethods()) {
        String path = "/" + s.getFullName() + "/" + m.getName();
        MethodPermissions.Needed needed = MethodPermissions.of(path).orElseThrow(() -> new AssertionError(
            path + " has no permission"));
        if (!m.getName().equals("TestIamPermissions") && !m.getName().equals("OpenMaterializedView")) {
          assertTrue(Roles.grants(Roles.ADMIN, needed.permission()), path + " needs " + needed.permission());
          needed.onView().ifPresent(v -> assertTrue(Roles.grants(Roles.ADMIN, v), path + " needs " + v));
          needed.onBackup().ifPresent(v -> assertTrue(Roles.grants(Roles.ADMIN, v), path + " needs " + v));
          needed.alsoOnInstance().ifPresent(v -> assertTrue(Roles.grants(Roles.ADMIN, v), path + " needs " + v));
        }
      }
    }
    assertTrue(MethodPermissions.of("/google.bigtable.v2.Bigtable/NoSuchMethod").isEmpty());
    // Cloud Bigtable's RestoreTable needs both: the backup's restore and the instance's table creation.
    MethodPermissions.Needed restore = MethodPermissions.of("/google.bigtable.admin.v2.BigtableTableAdmin/RestoreTable")
        .orElseThrow();
    assertEquals("bigtable.backups.restore", restore.permission());
    assertEquals(java.util.Optional.of("bigtable.tables.create"), restore.alsoOnInstance());
    assertEquals(java.util.Optional.of("bigtable.backups.setIamPolicy"), MethodPermissions.of(
        "/google.bigtable.admin.v2.BigtableTableAdmin/SetIamPolicy").orElseThrow().onBackup());
  }

  @Test
  void rolesNestAndKeepDataFromViewers() {
    for (String p : Roles.permissions(Roles.VIEWER)) {
      assertTrue(Roles.grants(Roles.READER, p), p);
    }
    for (String p : Roles.permissions(Roles.READER)) {
      assertTrue(Roles.grants(Roles.USER, p), p);
    }
    for (String p : Roles.permissions(Roles.USER)) {
      assertTrue(Roles.grants(Roles.ADMIN, p), p);
    }
    Map<String, String> firstWith = Map.of(
        "bigtable.tables.get", Roles.VIEWER, "bigtable.tables.readRows", Roles.READER,
        "bigtable.tables.mutateRows", Roles.USER, "bigtable.tables.create", Roles.ADMIN,
        "bigtable.tables.setIamPolicy", Roles.ADMIN, "tabula.nodes.manage", Roles.ADMIN);
    List<String> order = List.of(Roles.VIEWER, Roles.READER, Roles.USER, Roles.ADMIN);
    firstWith.forEach((permission, role) -> {
      for (String r : order) {
        assertEquals(order.indexOf(r) >= order.indexOf(role), Roles.grants(r, permission), r + " " + permission);
      }
    });
    assertFalse(Roles.grants("roles/bigtable.owner", "bigtable.tables.get"));
    assertEquals(java.util.Set.of("tabula.metrics.read"), Roles.permissions(Roles.METRICS_READER));
  }
}
