package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.BigtableInstanceAdminProto;
import com.google.bigtable.admin.v2.BigtableTableAdminProto;
import com.google.bigtable.v2.BigtableProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import io.tabula.protocol.locations.LocationsProto;
import java.util.HashMap;
import java.util.Map;

/**
 * The request message type of every method of the node's services (Cloud Bigtable data,
 * table admin and instance admin, Tabula's locations) whose client sends exactly one message, by its HTTP/2
 * path {@code /package.Service/Method}: those requests can be collected whole and checked
 * before they are parsed. Methods whose client streams (the session RPCs) are absent.
 * Immutable, built once from the services' descriptors.
 */
final class UnaryInputs {
  private static final Map<String, Descriptor> BY_PATH = build(BigtableProto.getDescriptor(),
      BigtableTableAdminProto.getDescriptor(), BigtableInstanceAdminProto.getDescriptor(),
      com.google.longrunning.OperationsProto.getDescriptor(), LocationsProto.getDescriptor());

  /**
   * The largest request a write method takes (Cloud Bigtable's limit for a MutateRows
   * request): MutateRow(s), CheckAndMutateRow and ReadModifyWriteRow carry cell values of up
   * to 100 MiB.
   */
  static final long MAX_WRITE_REQUEST_BYTES = 256L << 20;
  /** The largest request any other method takes: reads, admin and locations carry names, keys and filters. */
  static final long MAX_OTHER_REQUEST_BYTES = 16L << 20;
  private static final java.util.Set<String> WRITES = java.util.Set.of("/google.bigtable.v2.Bigtable/MutateRow",
      "/google.bigtable.v2.Bigtable/MutateRows", "/google.bigtable.v2.Bigtable/CheckAndMutateRow",
      "/google.bigtable.v2.Bigtable/ReadModifyWriteRow");

  private UnaryInputs() {}

  /** The most bytes a request to {@code path} may take, compressed or not. */
  static long maxBytes(String path) {
    return WRITES.contains(path) ? MAX_WRITE_REQUEST_BYTES : MAX_OTHER_REQUEST_BYTES;
  }

  static boolean has(String path) {
    return BY_PATH.containsKey(path);
  }

  /** The request type of the method at {@code path}; requires {@link #has}. */
  static Descriptor of(String path) {
    return BY_PATH.get(path);
  }

  private static Map<String, Descriptor> build(FileDescriptor... files) {
    Map<String, Descriptor> out = new HashMap<>();
    for (FileDescriptor f : files) {
      for (ServiceDescriptor s : f.getServices()) {
        for (MethodDescriptor m : s.getMethods()) {
          if (!m.isClientStreaming()) {
            out.put("/" + s.getFullName() + "/" + m.getName(), m.getInputType());
          }
        }
      }
    }
    return Map.copyOf(out);
  }
}
