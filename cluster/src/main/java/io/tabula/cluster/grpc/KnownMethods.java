package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.BigtableInstanceAdminProto;
import com.google.bigtable.admin.v2.BigtableTableAdminProto;
import com.google.bigtable.v2.BigtableProto;
import com.google.protobuf.Descriptors;
import io.tabula.protocol.groups.LocalityGroupsProto;
import io.tabula.protocol.locations.LocationsProto;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The gRPC methods the node's services declare, as request paths ({@code
 * /google.bigtable.v2.Bigtable/ReadRows}): a path of one of these services naming no method
 * of it is answered UNIMPLEMENTED up front (the generated handlers fail such a call
 * internally), and the metrics label calls by these names only. Immutable.
 */
public final class KnownMethods {
  private static final List<Descriptors.ServiceDescriptor> SERVICES = List.of(
      BigtableProto.getDescriptor().findServiceByName("Bigtable"),
      BigtableTableAdminProto.getDescriptor().findServiceByName("BigtableTableAdmin"),
      BigtableInstanceAdminProto.getDescriptor().findServiceByName("BigtableInstanceAdmin"),
      com.google.longrunning.OperationsProto.getDescriptor().findServiceByName("Operations"),
      LocationsProto.getDescriptor().getServices().get(0),
      LocalityGroupsProto.getDescriptor().getServices().get(0));
  private static final Set<String> PATHS = new HashSet<>();
  private static final Set<String> SERVICE_PREFIXES = new HashSet<>();

  static {
    for (Descriptors.ServiceDescriptor s : SERVICES) {
      SERVICE_PREFIXES.add("/" + s.getFullName() + "/");
      for (Descriptors.MethodDescriptor m : s.getMethods()) {
        PATHS.add("/" + s.getFullName() + "/" + m.getName());
      }
    }
  }

  private KnownMethods() {}

  /** Whether {@code path} names a method of one of the services. */
  public static boolean has(String path) {
    return PATHS.contains(path);
  }

  /** Whether {@code path} is under one of the services but names none of its methods. */
  static boolean unknownMethodOfKnownService(String path) {
    int slash = path.lastIndexOf('/');
    return slash > 0 && !PATHS.contains(path) && SERVICE_PREFIXES.contains(path.substring(0, slash + 1));
  }
}
