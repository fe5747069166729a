package io.tabula.cluster.grpc;

import io.tabula.actors.master.ClusterNodes;
import java.util.function.Supplier;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Where a tablet's owner (as the master's lookups and changes give it) is served, as the
 * cluster membership says: for
 * the Locations service (where a client should send a row's requests) and for the check of
 * a client's route. Thread-safe.
 */
final class Owners {
  private final Cluster cluster;
  private final String self;
  private final Supplier<String> selfEndpoint;

  /**
   * @param self this node's name
   * @param selfEndpoint this node's gRPC {@code host:port} (with port 0 known only once bound)
   */
  Owners(Cluster cluster, String self, Supplier<String> selfEndpoint) {
    this.cluster = cluster;
    this.self = self;
    this.selfEndpoint = selfEndpoint;
  }

  /**
   * The gRPC endpoint of the node serving a tablet owned by {@code owner}: the owner's when it
   * is another Up node, else this node's (which serves it, or forwards to wherever sharding
   * has it).
   */
  String endpointOf(String owner) {
    String other = otherOwner(owner);
    return other != null ? other : selfEndpoint.get();
  }

  /**
   * The endpoint of {@code owner} (a node's name; "" or null: none known) if that is another Up
   * node with a known endpoint, else null.
   */
  String otherOwner(String owner) {
    if (owner == null || owner.isEmpty() || owner.equals(self)) {
      return null;
    }
    for (ClusterNodes.NodeInfo n : ClusterNodes.all(cluster)) {
      if (n.name().equals(owner) && n.up() && !n.grpc().endsWith(":0")) {
        return n.grpc();
      }
    }
    return null;
  }
}
