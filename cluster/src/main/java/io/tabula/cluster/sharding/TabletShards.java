package io.tabula.cluster.sharding;

import java.util.List;
import java.util.stream.IntStream;
import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.actors.tablet.TabletNode;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.ShardingEnvelope;
import org.apache.pekko.cluster.sharding.typed.ShardingMessageExtractor;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/**
 * Where tablets live as Cluster Sharding entities: the entity type, this node's region for
 * it, and the reference to one tablet's entity by its id. One tablet is one shard (the shard
 * id is the tablet id), placed where the master says ({@link MasterAllocation}), and handed
 * over with {@link TabletActor.HandOff} as its stop message. The tablet actor itself does not
 * know it is sharded; this is the one place that does. Thread-safe (Pekko's sharding
 * extension is).
 *
 * <p>The tablets are spread over {@value #TYPES} entity types by a hash of their id, each with
 * its region on every node and its coordinator. Why: a region starting a shard first looks
 * through every shard it already runs (Pekko 1.2 to 1.5, {@code ShardRegion.getShard}), so
 * starting n shards in one region costs n²/2 steps: 100,000 tablets on one node spent most of
 * the node's CPU there, and took minutes to open. Over {@value #TYPES} types it is n²/128. More
 * types open a cluster's large table faster (each coordinator writes its whole state to its
 * peers at every allocation, one after another: three nodes served 20,000 tablets after 66 to
 * 82 s over 64 types, 38 to 42 s over 256, 41 s over 1,024) but slow every node's start (a
 * region and a coordinator's singleton manager per type: 4.9 s to 6.4 s to serving over 256,
 * bench/run-startup without the warm-up), which every user pays.
 */
public final class TabletShards {
  /** How many entity types the tablets are spread over; the same on every node of a cluster (a change raises ProtocolCheck.VERSION). */
  static final int TYPES = 64;
  /** The tablets' entity types ("tablet", "tablet-1", ...); an entity id is a tablet id. */
  private static final List<EntityTypeKey<TabletActor.Command>> KEYS = IntStream.range(0, TYPES)
      .mapToObj(i -> EntityTypeKey.create(TabletActor.Command.class, i == 0 ? "tablet" : "tablet-" + i)).toList();

  /** The entity type of tablet {@code tabletId}: by {@link String#hashCode}, which Java fixes. */
  static EntityTypeKey<TabletActor.Command> keyOf(String tabletId) {
    return KEYS.get(Math.floorMod(tabletId.hashCode(), TYPES));
  }

  private final ClusterSharding sharding;

  private TabletShards(ClusterSharding sharding) {
    this.sharding = sharding;
  }

  /**
   * Starts this node's region for tablets, serving them from {@code node}. A tablet actor that
   * fails unexpectedly (a bug: it answers every foreseen failure) is restarted on its tablet;
   * Pekko logs the failure with its stack.
   */
  public static TabletShards start(ActorSystem<?> system, TabletNode node) {
    ClusterSharding sharding = ClusterSharding.get(system);
    for (EntityTypeKey<TabletActor.Command> key : KEYS) {
      // An idle tablet stops through sharding's passivation: messages that come meanwhile wait
      // in its shard and start its next actor.
      sharding.init(Entity.of(key, ctx -> Behaviors.supervise(TabletActor.create(ctx.getEntityId(), node,
                  self -> ctx.getShard().tell(new ClusterSharding.Passivate<>(self))))
              .onFailure(SupervisorStrategy.restart()))
          .withMessageExtractor(new OneTabletPerShard())
          .withAllocationStrategy(new MasterAllocation(system, node.directory(), node.master()))
          .withStopMessage(TabletActor.HandOff.INSTANCE)
          .withRole(ClusterNodes.ROLE));
    }
    return new TabletShards(sharding);
  }

  /**
   * Stops this node's tablet regions at once, without handing their shards over: for a node
   * whose tablets were abandoned (its commit log is lost), which has nothing to hand over. A
   * region's graceful stop would wait, up to its shutdown phase's 10 s, for the messages it holds
   * for shards whose home no coordinator can give yet (their owner is this very node, leaving),
   * and the node's tablets would wait that long for it to leave. The coordinators see the
   * regions end and allocate their shards again when asked, as after a crash.
   */
  public static void stopRegions(ActorSystem<?> system) {
    org.apache.pekko.actor.ActorSystem classic = Adapter.toClassic(system);
    org.apache.pekko.cluster.sharding.ClusterSharding regions =
        org.apache.pekko.cluster.sharding.ClusterSharding.get(classic);
    for (EntityTypeKey<TabletActor.Command> key : KEYS) {
      classic.stop(regions.shardRegion(key.name()));
    }
  }

  /** The tablets of {@code system}'s cluster, whose region {@link #start} has started. */
  public static TabletShards of(ActorSystem<?> system) {
    return new TabletShards(ClusterSharding.get(system));
  }

  /** The entity of tablet {@code tabletId}, wherever it is served. */
  public EntityRef<TabletActor.Command> tablet(String tabletId) {
    return sharding.entityRefFor(keyOf(tabletId), tabletId);
  }

  /** Shard id = entity id = tablet id. */
  private static final class OneTabletPerShard
      extends ShardingMessageExtractor<ShardingEnvelope<TabletActor.Command>, TabletActor.Command> {
    @Override
    public String entityId(ShardingEnvelope<TabletActor.Command> envelope) {
      return envelope.entityId();
    }

    @Override
    public String shardId(String entityId) {
      return entityId;
    }

    @Override
    public TabletActor.Command unwrapMessage(ShardingEnvelope<TabletActor.Command> envelope) {
      return envelope.message();
    }
  }
}
