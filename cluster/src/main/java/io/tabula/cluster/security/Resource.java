package io.tabula.cluster.security;

import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The table or authorized view a request is about, from the resource names it carries
 * ({@link ResourceFields}): a data call's {@code authorized_view_name} when it has one, else
 * its {@code table_name}; an admin call's {@code resource}, {@code name} or {@code parent},
 * whichever it has, and else the name inside what an update changes ({@code
 * authorized_view.name}, {@code table.name}, {@code backup.name}). A restore's {@code backup} comes before its
 * {@code parent}. A backup's name names the backup (its policy and the instance's decide). An
 * instance or a malformed name names no table (the instance's policy alone decides then, and the
 * services refuse a malformed name).
 *
 * @param name the name as the request gave it
 * @param table the table's id, when it names a table or a view of one
 * @param view the view's id, when it names a view
 * @param backup the backup's id, when it names a backup
 */
record Resource(String name, Optional<String> table, Optional<String> view, Optional<String> backup) {
  private static final java.util.List<String> FIELDS = java.util.List.of("authorized_view_name", "table_name",
      "resource", "name", "backup", "parent", ResourceFields.NESTED_NAME);
  private static final Pattern BACKUP = Pattern.compile(
      "projects/[^/]+/instances/[^/]+/clusters/[^/]+/backups/([^/]+)");
  private static final Pattern TABLE = Pattern.compile("projects/[^/]+/instances/[^/]+/tables/([^/]+)");
  private static final Pattern VIEW = Pattern.compile(
      "projects/[^/]+/instances/[^/]+/tables/([^/]+)/authorizedViews/([^/]+)");

  static Resource named(Map<String, String> fields) {
    String name = "";
    // The first of these the request gives a value (an empty one names nothing, as for the services).
    for (String field : FIELDS) {
      String value = fields.getOrDefault(field, "");
      if (!value.isEmpty()) {
        name = value;
        break;
      }
    }
    Matcher v = VIEW.matcher(name);
    if (v.matches()) {
      return new Resource(name, Optional.of(v.group(1)), Optional.of(v.group(2)), Optional.empty());
    }
    Matcher t = TABLE.matcher(name);
    if (t.matches()) {
      return new Resource(name, Optional.of(t.group(1)), Optional.empty(), Optional.empty());
    }
    Matcher b = BACKUP.matcher(name);
    if (b.matches()) {
      return new Resource(name, Optional.empty(), Optional.empty(), Optional.of(b.group(1)));
    }
    return new Resource(name.isEmpty() ? "the instance" : name, Optional.empty(), Optional.empty(), Optional.empty());
  }
}
