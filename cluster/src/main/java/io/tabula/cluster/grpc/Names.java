package io.tabula.cluster.grpc;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cloud Bigtable resource names: {@code projects/P/instances/I} and
 * {@code projects/P/instances/I/tables/T}. A node serves one instance's worth of tables
 * under any project and instance name, as the emulator does; the table id must be a
 * valid Cloud Bigtable id.
 */
final class Names {
  private static final Pattern INSTANCE = Pattern.compile("projects/([^/]+)/instances/([^/]+)");
  private static final Pattern TABLE = Pattern.compile("(projects/[^/]+/instances/[^/]+)/tables/([^/]+)");
  private static final Pattern TABLE_ID = Pattern.compile("[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,49}");

  private Names() {}

  /** The table id of a full table name; INVALID_ARGUMENT naming {@code field} if malformed. */
  static String tableId(String field, String name) {
    Matcher m = TABLE.matcher(name);
    if (!m.matches()) {
      throw GrpcErrors.invalid(field, "'" + name + "' is not a table name of the form "
          + "projects/{project}/instances/{instance}/tables/{table}");
    }
    return checkTableId(field, m.group(2));
  }

  static String checkTableId(String field, String id) {
    if (!TABLE_ID.matcher(id).matches()) {
      throw GrpcErrors.invalid(field, "table id '" + id + "' must match [_a-zA-Z0-9][-_.a-zA-Z0-9]* and be at most"
          + " 50 characters");
    }
    return id;
  }

  static String instance(String field, String name) {
    if (!INSTANCE.matcher(name).matches()) {
      throw GrpcErrors.invalid(field, "'" + name + "' is not an instance name of the form "
          + "projects/{project}/instances/{instance}");
    }
    return name;
  }

  static String tableName(String instance, String table) {
    return instance + "/tables/" + table;
  }

  /** The instance part of a full table name (validated by {@link #tableId} first). */
  static String instanceOf(String tableName) {
    Matcher m = TABLE.matcher(tableName);
    return m.matches() ? m.group(1) : "";
  }
}
