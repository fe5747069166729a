package io.tabula.cluster.routing;

import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.tablet.NodeRequests;
import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Every other node's {@link NodeRequests}, by node name: the receptionist's listing (followed by
 * a small actor of this node) joined with the cluster membership's names. A node not (yet)
 * listed, or not Up, has none: its tablets are then reached through their sharded actors.
 * Thread-safe: the listing is swapped whole.
 */
public final class NodePeers {
  private final Cluster cluster;
  private final String self;
  /** Replaced whole by the listing actor; read by any thread. */
  private volatile Map<Address, ActorRef<NodeRequests.Command>> byAddress = Map.of();

  private NodePeers(Cluster cluster, String self) {
    this.cluster = cluster;
    this.self = self;
  }

  /** Starts following the listing of {@code system}'s receptionist. */
  public static NodePeers start(ActorSystem<?> system, String self) {
    NodePeers peers = new NodePeers(Cluster.get(system), self);
    system.systemActorOf(Behaviors.<Receptionist.Listing>setup(ctx -> {
      ctx.getSystem().receptionist().tell(Receptionist.subscribe(NodeRequests.KEY, ctx.getSelf()));
      return Behaviors.receiveMessage(listing -> {
        Map<Address, ActorRef<NodeRequests.Command>> next = new HashMap<>();
        for (ActorRef<NodeRequests.Command> r : listing.getServiceInstances(NodeRequests.KEY)) {
          next.put(r.path().address(), r);
        }
        peers.byAddress = Map.copyOf(next);
        return Behaviors.same();
      });
    }), "node-peers", Props.empty());
    return peers;
  }

  /** The instance of node {@code name} when that is another Up node with a listed instance, else null. */
  ActorRef<NodeRequests.Command> of(String name) {
    if (name.isEmpty() || name.equals(self)) {
      return null;
    }
    for (ClusterNodes.NodeInfo n : ClusterNodes.all(cluster)) {
      if (n.name().equals(name)) {
        return n.up() ? byAddress.get(n.address()) : null;
      }
    }
    return null;
  }
}
