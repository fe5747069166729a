package io.tabula.cluster.grpc;

import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.cluster.routing.Router;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.protocol.groups.Compression;
import io.tabula.protocol.groups.GetLocalityGroupsRequest;
import io.tabula.protocol.groups.LocalityGroups;
import io.tabula.protocol.groups.SetLocalityGroupRequest;
import io.tabula.protocol.groups.TableLocalityGroups;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletionStage;

/**
 * Tabula's {@code tabula.v1.LocalityGroups} service (paper §6): a table's locality groups,
 * their in-memory and compression settings, and the families created in them. Changes go to
 * the master like the table-admin API's, and are answered once this node's copy of the
 * directory holds them. Thread-safe.
 */
final class LocalityGroupsService implements LocalityGroups {
  /** The most families one request may create (Cloud Bigtable's limit of families per table). */
  static final int MAX_FAMILIES = 100;

  private final AdminService admin;
  private final Router router;

  LocalityGroupsService(AdminService admin, Router router) {
    this.admin = admin;
    this.router = router;
  }

  @Override
  public CompletionStage<TableLocalityGroups> setLocalityGroup(SetLocalityGroupRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("table_name", in.getTableName());
      String group = in.getGroup();
      if (!group.matches("[A-Za-z0-9_.-]{1,64}")) {
        throw GrpcErrors.invalid("group", "must be 1 to 64 letters, digits, '_', '-' or '.', was '"
            + (group.length() > 64 ? group.substring(0, 64) + "...' (" + group.length() + " characters)" : group + "'"));
      }
      io.tabula.persistence.sstable.Compression compression = switch (in.getCompression()) {
        case COMPRESSION_UNSPECIFIED -> null;
        case COMPRESSION_NONE -> io.tabula.persistence.sstable.Compression.NONE;
        case COMPRESSION_LZ4 -> io.tabula.persistence.sstable.Compression.LZ4;
        case COMPRESSION_ZSTD -> io.tabula.persistence.sstable.Compression.ZSTD;
        default -> throw GrpcErrors.invalid("compression", "unknown value " + in.getCompressionValue());
      };
      if (in.getFamiliesCount() > MAX_FAMILIES) {
        throw GrpcErrors.invalid("families", "at most " + MAX_FAMILIES + " per request, got " + in.getFamiliesCount());
      }
      List<String> families = new ArrayList<>();
      for (int i = 0; i < in.getFamiliesCount(); i++) {
        AdminService.checkFamily("families[" + i + "]", in.getFamilies(i));
        if (families.contains(in.getFamilies(i))) {
          throw GrpcErrors.invalid("families[" + i + "]", "family " + in.getFamilies(i) + " is listed twice");
        }
        families.add(in.getFamilies(i));
      }
      Boolean inMemory = in.hasInMemory() ? in.getInMemory() : null;
      return admin.seen(admin.<TableInfo>askMaster(r -> new Master.SetLocalityGroup(table, group, inMemory,
          compression, families, r))).thenApply(t -> toProto(in.getTableName(), t));
    });
  }

  @Override
  public CompletionStage<TableLocalityGroups> getLocalityGroups(GetLocalityGroupsRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("table_name", in.getTableName());
      return router.table(table).thenApply(t -> toProto(in.getTableName(), t));
    });
  }

  /** Every group of {@code t}, the default first, with its families in name order. */
  static TableLocalityGroups toProto(String tableName, TableInfo t) {
    Map<String, TreeSet<String>> members = new TreeMap<>();
    members.put(LocalityGroup.DEFAULT_NAME, new TreeSet<>());
    t.groups().keySet().forEach(g -> members.put(g, new TreeSet<>()));
    t.families().keySet().forEach(f -> members.computeIfAbsent(t.groupOf(f), g -> new TreeSet<>()).add(f));
    TableLocalityGroups.Builder b = TableLocalityGroups.newBuilder().setTableName(tableName);
    List<String> order = new ArrayList<>(members.keySet());
    order.remove(LocalityGroup.DEFAULT_NAME);
    order.add(0, LocalityGroup.DEFAULT_NAME);
    for (String g : order) {
      LocalityGroup settings = t.group(g);
      b.addGroups(io.tabula.protocol.groups.LocalityGroup.newBuilder().setName(g).setInMemory(settings.inMemory())
          .setCompression(switch (settings.compression()) {
            case NONE -> Compression.COMPRESSION_NONE;
            case LZ4 -> Compression.COMPRESSION_LZ4;
            case ZSTD -> Compression.COMPRESSION_ZSTD;
          }).addAllFamilies(members.get(g)));
    }
    return b.build();
  }
}
