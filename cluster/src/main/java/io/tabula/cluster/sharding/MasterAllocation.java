package io.tabula.cluster.sharding;

import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.ShardCoordinator;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.pattern.StatusReply;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;

/**
 * Cluster Sharding's allocation of tablets, following the master (paper §5.2: the master
 * assigns tablets to tablet servers). Sharding only carries out the placement the master
 * recorded in the directory; it never picks a node of its own:
 *
 * <ul>
 *   <li>A tablet goes to its owner's region. If its owner is Up but has no region yet (it is
 *       starting), or the master cannot place it yet (a dead owner is being fenced), the
 *       allocation tries again every {@value #NOT_YET_MS} ms, for up to 15 s, before it fails
 *       and sharding asks again. If it
 *       has no owner, or its owner is leaving or gone, the master is asked to place it
 *       ({@link Master.Place}: recorded before it answers), and it goes there.
 *   <li>A tablet the node's copy does not hold is placed as the master answers {@link
 *       Master.Place}; one the master does not know either (a split parent, a deleted table's,
 *       a made-up id) goes to the region that asked: its actor only answers that the row moved.
 *   <li>Rebalancing hands over exactly the tablets whose region is not their owner's, when
 *       the owner has a region: a master's move (or placement) is carried out this way. A
 *       region on a node that is unreachable or down is left alone: its hand-over could only
 *       wait for the hand-over timeout, and its tablets are allocated again, to the owners the
 *       master placed them on, as soon as its node is removed.
 * </ul>
 *
 * Unlike {@code ExternalShardAllocation}, whose locations live in non-durable distributed
 * data, are never removed and fall back silently to the requester, the locations here are the
 * master's journaled directory, and a tablet never lands where the master did not put it.
 *
 * <p>Runs on the node of the shard coordinator (a singleton), reading that node's copy of the
 * directory; thread-safe (the coordinator calls it from its actor, the futures complete
 * anywhere).
 */
final class MasterAllocation extends ShardCoordinator.AbstractShardAllocationStrategy {
  private static final Duration ASK = Duration.ofSeconds(5);
  /** How long an allocation that cannot be made yet waits before it tries again. */
  private static final long NOT_YET_MS = 300;
  /** How long an allocation goes on trying before it fails (sharding then asks again, and logs it). */
  private static final long PATIENCE_MS = 15_000;

  private final ActorSystem<?> system;
  private final DirectoryCache directory;
  private final org.apache.pekko.actor.typed.ActorRef<Master.Command> master;
  private final Cluster cluster;
  /** Allocations under way, by tablet id: asked again meanwhile, a tablet gets the same one. */
  private final java.util.concurrent.ConcurrentHashMap<String, CompletableFuture<ActorRef>> inFlight =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The active regions the coordinator gave its last {@link #allocateShard} (a region asks again
   * for a home it waits for every {@code retry-interval}, and joins the allocation under way): a
   * try after the first reads them afresh, so a tablet whose owner had no region when it was
   * first asked goes there once the region registered. Written by the coordinator's actor, read
   * by tries on the dispatcher.
   */
  private volatile Set<ActorRef> latestRegions = Set.of();

  /** How often {@link #rebalance} looks at every tablet even when nothing seems to move. */
  private static final long FULL_LOOK_NANOS = TimeUnit.SECONDS.toNanos(5);
  /** The regions of the last look that found nothing to move (empty: it found some). Owned by the coordinator. */
  private volatile Set<ActorRef> lastRegions = Set.of();
  /** When {@link #rebalance} last looked at every tablet (nanoTime). */
  private volatile long lastFullLook = Long.MIN_VALUE / 2;

  /** Reads the monotonic time its patience goes by from {@code nanoTime}. */
  private final java.util.function.LongSupplier nanoTime;

  MasterAllocation(ActorSystem<?> system, DirectoryCache directory,
      org.apache.pekko.actor.typed.ActorRef<Master.Command> master) {
    this(system, directory, master, System::nanoTime);
  }

  MasterAllocation(ActorSystem<?> system, DirectoryCache directory,
      org.apache.pekko.actor.typed.ActorRef<Master.Command> master, java.util.function.LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    this.system = system;
    this.directory = directory;
    this.master = master;
    this.cluster = Cluster.get(system);
  }

  /** A tablet that cannot be placed right now; sharding asks again. Not an error of the node. */
  static final class NotYet extends RuntimeException {
    NotYet(String message) {
      super(message, null, false, false);
    }
  }

  @Override
  public Future<ActorRef> allocateShard(ActorRef requester, String shardId,
      Map<ActorRef, IndexedSeq<String>> currentShardAllocations) {
    Set<ActorRef> regions = Set.copyOf(currentShardAllocations.keySet());
    latestRegions = regions;
    // Regions ask for a tablet's home again while an allocation is under way; they share it,
    // so a tablet that waits for its fence costs one try every NOT_YET_MS, however often asked.
    CompletableFuture<ActorRef> mine = new CompletableFuture<>();
    CompletableFuture<ActorRef> shared = inFlight.putIfAbsent(shardId, mine);
    if (shared != null) {
      return FutureConverters.asScala(shared);
    }
    mine.whenComplete((region, err) -> inFlight.remove(shardId, mine));
    attempt(requester, shardId, nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(PATIENCE_MS), mine);
    return FutureConverters.asScala(mine);
  }

  /**
   * One try to allocate, completing {@code result}; while the tablet cannot be placed yet (its
   * owner is starting, or a dead owner's log is still being fenced: every {@value #NOT_YET_MS}
   * ms) or the master did not answer in time, the next try is started afresh on the system's
   * dispatcher, over the regions the coordinator gave last ({@link #latestRegions}), until
   * {@code deadline}; only then does the allocation fail, and sharding asks
   * again. Waiting here rather than failing at once keeps a routine wait, such as every tablet
   * of a dead node waiting for its fence, out of the coordinator's error log.
   *
   * <p>A try never calls the next one on its own stack, nor chains futures through every try:
   * a chain of retries, each completing the one before, once overflowed the stack of the
   * thread that completed the last (100,000 tablets of a new table waiting at once).
   */
  private void attempt(ActorRef requester, String shardId, long deadline, CompletableFuture<ActorRef> result) {
    CompletionStage<ActorRef> attempt;
    Set<ActorRef> regions = latestRegions;
    try {
      attempt = allocate(directory.get(), requester, shardId, regions);
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
      return;
    }
    attempt.whenComplete((region, err) -> {
      if (err == null) {
        result.complete(region);
        return;
      }
      Throwable cause = err instanceof java.util.concurrent.CompletionException c ? c.getCause() : err;
      // Not placeable yet, or the master did not answer in time (busy placing a dead node's
      // tablets, or moving to another node): ask again while there is time.
      boolean again = cause instanceof NotYet || cause instanceof java.util.concurrent.TimeoutException;
      if (again && nanoTime.getAsLong() - deadline < 0) {
        system.executionContext().execute(() -> attempt(requester, shardId, deadline, result));
      } else {
        result.completeExceptionally(cause);
      }
    });
  }

  /**
   * Where {@code shardId} goes: its owner's region, by the node's copy when that knows the
   * tablet and the region; else as the master answers {@link Master.Place} (which places a
   * tablet without an owner, and knows the tablets a copy does not hold: only the master's
   * node holds every tablet); a tablet the master does not know goes to the requester.
   */
  private CompletionStage<ActorRef> allocate(Directory d, ActorRef requester, String shardId, Set<ActorRef> regions) {
    String owner = d.tablet(shardId) == null ? "" : d.ownerOf(shardId);
    ActorRef region = regionOf(owner, regions);
    if (region != null) {
      return CompletableFuture.completedFuture(region);
    }
    Optional<ClusterNodes.NodeInfo> member = ClusterNodes.all(cluster).stream()
        .filter(n -> !owner.isEmpty() && n.name().equals(owner)).findFirst();
    if (member.isPresent() && isStarting(member.get().status())) {
      return notYet("tablet " + shardId + ": its node " + owner + " has no region yet");
    }
    return AskPattern.<Master.Command, StatusReply<String>>ask(master, r -> new Master.Place(shardId, r), ASK,
        system.scheduler()).thenCompose(reply -> {
          if (reply.isError() && Refusal.is(reply.getError(), ErrorCode.NOT_FOUND)) {
            // a split parent, a deleted table's, a made-up id: its actor only answers that the row moved
            return CompletableFuture.completedFuture(regions.contains(requester) ? requester
                : regions.iterator().next());
          }
          if (reply.isError()) {
            return notYet("tablet " + shardId + " could not be placed: " + reply.getError().getMessage());
          }
          ActorRef placed = regionOf(reply.getValue(), regions);
          return placed != null ? CompletableFuture.completedFuture(placed)
              : notYet("tablet " + shardId + ": its node " + reply.getValue() + " has no region yet");
        });
  }

  private static boolean isStarting(MemberStatus s) {
    return s == MemberStatus.joining() || s == MemberStatus.weaklyUp() || s == MemberStatus.up();
  }

  private static CompletionStage<ActorRef> notYet(String why) {
    CompletableFuture<ActorRef> f = new CompletableFuture<>();
    CompletableFuture.delayedExecutor(NOT_YET_MS, TimeUnit.MILLISECONDS).execute(() ->
        f.completeExceptionally(new NotYet(why)));
    return f;
  }

  @Override
  public Future<java.util.Set<String>> rebalance(Map<ActorRef, IndexedSeq<String>> currentShardAllocations,
      java.util.Set<String> rebalanceInProgress) {
    Directory d = directory.get();
    Set<ActorRef> regions = currentShardAllocations.keySet();
    long now = nanoTime.getAsLong();
    // A look reads every tablet's owner. When the last look found nothing, no tablet is moving
    // and the regions are the same, nothing can have moved but through a slow path (an
    // allocation made from a directory copy that was behind): a full look every FULL_LOOK_NANOS
    // finds those.
    if (d.unsettledTablets().isEmpty() && regions.equals(lastRegions) && now - lastFullLook < FULL_LOOK_NANOS) {
      return Future.successful(java.util.Set.of());
    }
    java.util.Set<String> move = new HashSet<>();
    for (Map.Entry<ActorRef, IndexedSeq<String>> e : currentShardAllocations.entrySet()) {
      if (!answers(e.getKey())) {
        continue;
      }
      String node = nodeOf(e.getKey());
      scala.collection.Iterator<String> shards = e.getValue().iterator();
      while (shards.hasNext()) {
        String shard = shards.next();
        if (rebalanceInProgress.contains(shard)) {
          continue;
        }
        String owner = d.ownerOf(shard); // empty for a tablet the directory does not know
        if (!owner.isEmpty() && !owner.equals(node) && regionOf(owner, regions) != null) {
          move.add(shard);
        }
      }
    }
    lastRegions = move.isEmpty() ? Set.copyOf(regions) : Set.of();
    lastFullLook = now;
    return Future.successful(move);
  }

  /** Whether {@code region}'s node is reachable and not down: a hand-over from it can complete. */
  private boolean answers(ActorRef region) {
    Address a = region.path().address();
    Address at = a.hasGlobalScope() ? a : cluster.selfMember().address();
    for (ClusterNodes.NodeInfo n : ClusterNodes.all(cluster)) {
      if (n.address().equals(at)) {
        return n.reachable() && n.status() != MemberStatus.down() && n.status() != MemberStatus.removed();
      }
    }
    return false;
  }

  /** The region of node {@code name} among {@code regions}, or null. */
  private ActorRef regionOf(String name, Collection<ActorRef> regions) {
    if (name.isEmpty()) {
      return null;
    }
    for (ActorRef r : regions) {
      if (name.equals(nodeOf(r))) {
        return r;
      }
    }
    return null;
  }

  /** The name of the node a region lives on, or null if it is not a Tabula node. */
  private String nodeOf(ActorRef region) {
    Address a = region.path().address();
    Address at = a.hasGlobalScope() ? a : cluster.selfMember().address();
    for (ClusterNodes.NodeInfo n : ClusterNodes.all(cluster)) {
      if (n.address().equals(at)) {
        return n.name();
      }
    }
    return null;
  }
}
