package io.tabula.cluster.security;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Cloud Bigtable's predefined roles, as sets of the permissions Tabula checks: each role's
 * {@code bigtable.*} permissions in Cloud IAM (those of resources Tabula has no notion of,
 * such as logical and materialized views, memory layers and tag bindings, left out), and
 * Tabula's own for Management HTTP: {@code tabula.nodes.get} and {@code tabula.metrics.read}
 * (viewers and up), {@code tabula.nodes.manage} (admins). Immutable.
 */
public final class Roles {
  public static final String ADMIN = "roles/bigtable.admin";
  public static final String USER = "roles/bigtable.user";
  public static final String READER = "roles/bigtable.reader";
  public static final String VIEWER = "roles/bigtable.viewer";
  /** Tabula's own role for a metrics scraper: {@code /metrics} and nothing else. */
  public static final String METRICS_READER = "roles/tabula.metricsReader";

  /** What a viewer may see: the instance's shape, never data. */
  private static final Set<String> VIEW = Set.of(
      "bigtable.appProfiles.get", "bigtable.appProfiles.list",
      "bigtable.authorizedViews.get", "bigtable.authorizedViews.list",
      "bigtable.backups.get", "bigtable.backups.list",
      "bigtable.clusters.get", "bigtable.clusters.list",
      "bigtable.hotTablets.list",
      "bigtable.instances.get", "bigtable.instances.list",
      "bigtable.locations.list",
      "bigtable.logicalViews.get", "bigtable.logicalViews.list",
      "bigtable.materializedViews.get", "bigtable.materializedViews.list",
      "bigtable.schemaBundles.get", "bigtable.schemaBundles.list",
      "bigtable.tables.checkConsistency", "bigtable.tables.generateConsistencyToken", "bigtable.tables.get",
      "bigtable.tables.list",
      "tabula.nodes.get", "tabula.metrics.read");
  /** What a reader adds: the data. */
  private static final Set<String> READ = Set.of(
      "bigtable.authorizedViews.readRows", "bigtable.authorizedViews.sampleRowKeys",
      "bigtable.instances.executeQuery", "bigtable.instances.ping",
      "bigtable.keyvisualizer.get", "bigtable.keyvisualizer.list",
      "bigtable.tables.readRows", "bigtable.tables.sampleRowKeys");
  /** What a user adds: writes. */
  private static final Set<String> WRITE = Set.of(
      "bigtable.tables.mutateRows", "bigtable.authorizedViews.mutateRows");
  /** What only an admin has: changes of the instance's shape and of who may do what. */
  private static final Set<String> ADMINISTER = Set.of(
      "bigtable.tables.create", "bigtable.tables.delete", "bigtable.tables.update", "bigtable.tables.undelete",
      "bigtable.tables.getIamPolicy", "bigtable.tables.setIamPolicy",
      "bigtable.authorizedViews.create", "bigtable.authorizedViews.delete", "bigtable.authorizedViews.update",
      "bigtable.authorizedViews.getIamPolicy", "bigtable.authorizedViews.setIamPolicy",
      "bigtable.backups.create", "bigtable.backups.delete", "bigtable.backups.update", "bigtable.backups.restore",
      "bigtable.backups.read", "bigtable.backups.getIamPolicy", "bigtable.backups.setIamPolicy",
      "bigtable.instances.getIamPolicy", "bigtable.instances.setIamPolicy", "bigtable.instances.update",
      "bigtable.instances.create", "bigtable.instances.delete",
      "bigtable.appProfiles.create", "bigtable.appProfiles.delete", "bigtable.appProfiles.update",
      "bigtable.clusters.create", "bigtable.clusters.delete", "bigtable.clusters.update",
      "bigtable.schemaBundles.create", "bigtable.schemaBundles.delete", "bigtable.schemaBundles.update",
      "bigtable.logicalViews.create", "bigtable.logicalViews.delete", "bigtable.logicalViews.update",
      "bigtable.materializedViews.create", "bigtable.materializedViews.delete", "bigtable.materializedViews.update",
      "tabula.nodes.manage");

  private static final Map<String, Set<String>> PERMISSIONS = Map.of(
      METRICS_READER, Set.of("tabula.metrics.read"),
      VIEWER, union(VIEW),
      READER, union(VIEW, READ),
      USER, union(VIEW, READ, WRITE),
      ADMIN, union(VIEW, READ, WRITE, ADMINISTER));

  private Roles() {}

  /** Whether {@code role} is one of the roles Tabula knows. */
  public static boolean known(String role) {
    return PERMISSIONS.containsKey(role);
  }

  /** The roles, by name. */
  public static Set<String> names() {
    return PERMISSIONS.keySet();
  }

  /** Whether {@code role} includes {@code permission}; an unknown role includes none. */
  public static boolean grants(String role, String permission) {
    Set<String> p = PERMISSIONS.get(role);
    return p != null && p.contains(permission);
  }

  /** Every permission of {@code role} (empty for an unknown one). */
  public static Set<String> permissions(String role) {
    return PERMISSIONS.getOrDefault(role, Set.of());
  }

  @SafeVarargs
  private static Set<String> union(Set<String>... sets) {
    Set<String> out = new HashSet<>();
    for (Set<String> s : sets) {
      out.addAll(s);
    }
    return Set.copyOf(out);
  }
}
