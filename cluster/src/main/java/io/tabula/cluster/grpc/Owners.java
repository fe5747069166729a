package io.tabula.cluster.grpc;

import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.master.Directory;
import java.util.function.Supplier;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Which node serves a tablet, as this node's directory and the cluster membership say: for
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
   * The gRPC endpoint of the node serving tablet {@code tabletId}: its owner's when the owner
   * is another Up node, else this node's (which serves it, or forwards to wherever sharding
   * has it).
   */
  String endpointOf(Directory d, String tabletId) {
    String other = otherOwner(d, tabletId);
    return other != null ? other : selfEndpoint.get();
  }

  /** The endpoint of the tablet's owner if that is another Up node with a known endpoint, else null. */
  String otherOwner(Directory d, String tabletId) {
    String owner = d.ownerOf(tabletId);
    if (owner.isEmpty() || owner.equals(self)) {
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
