package io.tabula.cluster;

import io.tabula.actors.journal.MasterJournals;
import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.master.MasterNodes;
import io.tabula.actors.tablet.NodeRequests;
import io.tabula.persistence.storage.RootMismatchException;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.tablet.FileSweeper;
import io.tabula.persistence.wal.LogFolderMissingException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Down;
import org.apache.pekko.cluster.typed.Leave;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster as the master of this node sees and acts on it ({@link MasterNodes}): Pekko's
 * membership, leave and down; fencing a node's commit logs on the shared storage root and
 * having the live nodes sort them into recovery pieces ({@link LogRecovery}); the sweep of
 * unreferenced SSTables ({@link FileSweeper}), which deletes only while this node holds the
 * master lease and its master's journal. File work runs on the blocking-I/O dispatcher, never
 * on the master's thread.
 *
 * <p>A fence is made only on the cluster's storage root: the root's identity is read again
 * first ({@link LogSweeper#fenceAll}), and on a root that is not the one this node started on
 * (which the cluster's join check compared) the fence is refused. Fencing there would write
 * markers no writer of the cluster looks at, and the recovery that follows would find the dead
 * node's logs absent and drop them. Likewise a log folder a tablet's placement names is fenced
 * only if it is on the root ({@link #fenceLogs}): one that is not was written on another root.
 */
final class ClusterMasterNodes implements MasterNodes {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterMasterNodes.class);
  /** How long one node may take to sort one segment of a dead node's log (64 MiB by default). */
  private static final Duration SORT_TIMEOUT = Duration.ofSeconds(60);
  /** How long the master waits for a dead node's log to be sorted before it places the tablets anyway. */
  private static final Duration SORT_WAIT = Duration.ofSeconds(10);

  private final ActorSystem<?> system;
  private final Cluster cluster;
  private final String self;
  private final Storage storage;
  /** The storage root as its operator named it, for errors. */
  private final String rootName;
  /** The identity of the root this node started on, the cluster's. */
  private final UUID rootId;
  /** Whether a fence was refused on a root that is not the cluster's: logged once, with why. */
  private final AtomicBoolean refusalLogged = new AtomicBoolean();
  /** The named log folders whose fence was refused because they are not on the root: each logged once. */
  private final Set<String> missingLogged = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final FileSweeper fileSweeper;
  private final Executor blockingIo;
  /** Nodes seen downed or removed, by name; written by the watcher actor, read by the master. */
  private final Set<String> downedOrRemoved = java.util.concurrent.ConcurrentHashMap.newKeySet();

  ClusterMasterNodes(ActorSystem<?> system, Cluster cluster, String self, Storage storage, String rootName,
      UUID rootId, FileSweeper fileSweeper) {
    this.system = system;
    this.cluster = cluster;
    this.self = self;
    this.storage = storage;
    this.rootName = rootName;
    this.rootId = rootId;
    this.fileSweeper = fileSweeper;
    this.blockingIo = system.dispatchers().lookup(DispatcherSelector.blocking());
    ActorRef<ClusterEvent.ClusterDomainEvent> watcher = system.systemActorOf(
        Behaviors.receive(ClusterEvent.ClusterDomainEvent.class)
            .onMessage(ClusterEvent.MemberDowned.class, e -> seenGone(e.member()))
            .onMessage(ClusterEvent.MemberRemoved.class, e -> seenGone(e.member()))
            .build(), "master-nodes-watcher", Props.empty());
    cluster.subscriptions().tell(Subscribe.create(watcher.<ClusterEvent.MemberDowned>narrow(),
        ClusterEvent.MemberDowned.class));
    cluster.subscriptions().tell(Subscribe.create(watcher.<ClusterEvent.MemberRemoved>narrow(),
        ClusterEvent.MemberRemoved.class));
  }

  private Behavior<ClusterEvent.ClusterDomainEvent> seenGone(Member m) {
    ClusterNodes.of(m).ifPresent(n -> downedOrRemoved.add(n.name()));
    return Behaviors.same();
  }

  @Override
  public Set<String> gone() {
    Set<String> members = new java.util.HashSet<>();
    for (ClusterNodes.NodeInfo n : all()) {
      if (n.status() != MemberStatus.down() && n.status() != MemberStatus.removed()) {
        members.add(n.name());
      }
    }
    Set<String> out = new java.util.HashSet<>(downedOrRemoved);
    out.removeAll(members);
    return out;
  }

  @Override
  public List<ClusterNodes.NodeInfo> all() {
    return ClusterNodes.all(cluster);
  }

  @Override
  public void leave(ClusterNodes.NodeInfo node) {
    cluster.manager().tell(Leave.create(node.address()));
  }

  @Override
  public String self() {
    return self;
  }

  /**
   * Fences the node's logs (but {@code spare}), then has the live nodes sort them into recovery
   * pieces (LogRecovery). Fails with {@link RootMismatchException} (as the cause) if the storage root
   * is not the cluster's.
   *
   * <p>A node with no log folder at all on the root is fenced with nothing to fence, and that
   * is logged: it stopped before its storage engine opened its log (which a node does after it
   * joins), so it acknowledged nothing, or its folders were deleted (a later life of the node
   * deletes those no tablet names). No marker is left for it: a marker belongs to one life's
   * folder, and the name a life of that node would give its folder is not known here.
   */
  @Override
  public CompletionStage<Void> fence(String node, Set<String> spare) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        List<String> fenced = LogSweeper.fenceAll(storage, rootName, rootId, node, spare);
        if (fenced.isEmpty() && spare.isEmpty()) {
          LOG.warn("node {} has no commit-log folder under logs/ on the storage root {}: nothing to fence (it "
              + "stopped before it opened its commit log, or its folders were deleted)", node, rootName);
        }
        return fenced;
      } catch (RootMismatchException e) {
        if (refusalLogged.compareAndSet(false, true)) {
          LOG.error("refusing to fence on a storage root that is not the cluster's: {}", e.getMessage());
        }
        throw new UncheckedIOException(e);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, blockingIo).thenComposeAsync(fenced -> LogRecovery.sortPieces(system, storage, node, fenced, SORT_TIMEOUT)
        .toCompletableFuture()
        // Placing waits this long at most: what is not sorted by then, the tablets sort.
        .completeOnTimeout(null, SORT_WAIT.toMillis(), TimeUnit.MILLISECONDS), blockingIo);
  }

  /**
   * Fences the commit-log folders {@code folders}, on the cluster's storage root only (as {@link
   * #fence}), and only folders that exist there ({@link LogSweeper#fenceNamed}): a named folder
   * missing from the root fails the fence with {@link LogFolderMissingException} (the cause),
   * logged once for each folder, and the tablet that names it does not open (the opener is
   * answered UNAVAILABLE and asks again), rather than replay an empty folder made by the fence.
   */
  @Override
  public CompletionStage<Void> fenceLogs(java.util.Collection<String> folders) {
    return CompletableFuture.runAsync(() -> {
      try {
        LogSweeper.fenceNamed(storage, rootName, rootId, folders);
      } catch (RootMismatchException e) {
        if (refusalLogged.compareAndSet(false, true)) {
          LOG.error("refusing to fence on a storage root that is not the cluster's: {}", e.getMessage());
        }
        throw new UncheckedIOException(e);
      } catch (LogFolderMissingException e) {
        if (missingLogged.add(e.dir())) {
          LOG.error("refusing to fence the commit log {} on the storage root {}, where its folder is not: {}. The "
              + "tablets that name it stay closed (UNAVAILABLE) until it is there: its writer wrote another root (a "
              + "copy of this one, another mount), which holds the writes it acknowledged", e.dir(), rootName,
              e.getMessage());
        }
        throw new UncheckedIOException(e);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, blockingIo);
  }

  /** How long a node may take to say whether it holds a tablet. */
  private static final Duration HOLDS_TIMEOUT = Duration.ofSeconds(3);

  @Override
  public CompletionStage<Boolean> holds(ClusterNodes.NodeInfo node, String tabletId) {
    return org.apache.pekko.actor.typed.javadsl.AskPattern.<org.apache.pekko.actor.typed.receptionist.Receptionist.Command,
            org.apache.pekko.actor.typed.receptionist.Receptionist.Listing>ask(system.receptionist(),
            r -> org.apache.pekko.actor.typed.receptionist.Receptionist.find(NodeRequests.KEY, r), HOLDS_TIMEOUT,
            system.scheduler())
        .thenCompose(listing -> {
          for (ActorRef<NodeRequests.Command> r : listing.getServiceInstances(NodeRequests.KEY)) {
            org.apache.pekko.actor.Address a = r.path().address().hasGlobalScope() ? r.path().address()
                : cluster.selfMember().address();
            if (a.equals(node.address())) {
              return org.apache.pekko.actor.typed.javadsl.AskPattern.<NodeRequests.Command, NodeRequests.Holding>ask(r,
                  reply -> new NodeRequests.Holds(tabletId, reply), HOLDS_TIMEOUT, system.scheduler())
                  .thenApply(NodeRequests.Holding::open);
            }
          }
          return CompletableFuture.failedFuture(new IllegalStateException("node " + node.name()
              + " has no node-requests actor registered yet"));
        });
  }

  @Override
  public boolean holdsLease() {
    return MasterJournalSetup.masterLease(system).checkLease();
  }

  @Override
  public void down(ClusterNodes.NodeInfo node) {
    cluster.manager().tell(new Down(node.address()));
  }

  @Override
  public CompletionStage<FileSweeper.Result> sweepFiles(FileSweeper.Marks marks,
      Supplier<Map<String, Set<String>>> tablets) {
    Lease lease = MasterJournalSetup.masterLease(system);
    MasterJournals journals = MasterJournalSetup.journalPlugin(system.settings().config())
        .equals("tabula.master-journal") ? MasterJournals.get(Adapter.toClassic(system)) : null;
    // Before each batch of deletions: the lease the master's singleton took is held now (the
    // same instance: Pekko's lease provider keeps one per name, config and owner) and, with the
    // journal on the storage root, no newer master has fenced this one's epoch. With the journal
    // in PostgreSQL the lease's row is the journal's fence, so the lease says it all.
    FileSweeper.MasterCheck stillMaster = () -> lease.checkLease() && (journals == null || journals.holdsJournal());
    return CompletableFuture.supplyAsync(() -> {
      try {
        // Expired backups first (docs/backups.md): their files are then the sweep's like any unnamed file. A
        // failure here keeps the sweep from nothing.
        try {
          FileSweeper.Expired expired = fileSweeper.expireBackups(System.currentTimeMillis() * 1000, stillMaster);
          if (!expired.deleted().isEmpty()) {
            LOG.info("deleted {} expired or unfinished backups: {}", expired.deleted().size(), expired.deleted());
          }
          if (!expired.problems().isEmpty()) {
            LOG.warn("backups not expired this time (looked at again at the next sweep): {}", expired.problems());
          }
        } catch (IOException e) {
          LOG.warn("expiring backups failed this time; the next sweep tries again: {}", e.toString());
        }
        return fileSweeper.sweep(marks, tablets, stillMaster);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, blockingIo);
  }
}
