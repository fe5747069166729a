package io.tabula.cluster;

import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.tablet.NodeRequests;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.wal.LogPieces;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.pattern.StatusReply;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's part in recovering a dead node's commit log (paper §6): once the node's log
 * folders are fenced, their segments are sorted into recovery pieces ({@link LogPieces}) in
 * parallel across the live nodes, each node sorting one segment at a time (a sort holds about
 * twice a segment in memory), taking the next from a shared queue when it is done. The master
 * places the dead node's tablets when this completes, so their new owners find the pieces
 * ready and each reads only its own runs.
 *
 * <p>It never fails and never blocks its caller: a node that does not answer in time, or
 * fails a sort, gives up its queue; a segment left unsorted is sorted by the first tablet
 * that needs it. A sort done twice (a node that answered late, a master that took over) gives
 * the same piece, published once.
 */
final class LogRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(LogRecovery.class);

  private LogRecovery() {}

  /**
   * Sorts the segments of {@code node}'s fenced log folders {@code folders} across the live nodes;
   * completes when all are done or given up.
   */
  static CompletionStage<Void> sortPieces(ActorSystem<?> system, Storage storage, String node,
      java.util.Collection<String> folders, Duration askTimeout) {
    long start = System.nanoTime();
    Queue<String[]> work = new ArrayDeque<>();
    try {
      for (String folder : folders) {
        String dir = Storage.path("logs", folder);
        for (String segment : LogPieces.segments(storage, dir)) {
          work.add(new String[] {dir, segment});
        }
      }
    } catch (IOException e) {
      LOG.warn("could not list the commit log of node {} to sort it; its tablets' new owners sort it", node, e);
      return CompletableFuture.completedFuture(null);
    }
    if (work.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    int segments = work.size();
    return AskPattern.<Receptionist.Command, Receptionist.Listing>ask(system.receptionist(),
            r -> Receptionist.find(NodeRequests.KEY, r), askTimeout, system.scheduler())
        .thenCompose(listing -> {
          Map<Address, String> live = new HashMap<>();
          for (ClusterNodes.NodeInfo n : ClusterNodes.all(Cluster.get(system))) {
            if (n.up() && n.reachable()) {
              live.put(n.address(), n.name());
            }
          }
          List<CompletableFuture<Void>> workers = new ArrayList<>();
          List<String> sorters = new ArrayList<>();
          AtomicInteger sorted = new AtomicInteger();
          for (ActorRef<NodeRequests.Command> r : listing.getServiceInstances(NodeRequests.KEY)) {
            Address a = r.path().address().hasGlobalScope() ? r.path().address()
                : Cluster.get(system).selfMember().address();
            if (live.containsKey(a)) {
              sorters.add(live.get(a));
              CompletableFuture<Void> done = new CompletableFuture<>();
              next(system, r, live.get(a), work, askTimeout, sorted, done);
              workers.add(done);
            }
          }
          return CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).thenRun(() ->
              LOG.info("sorted {} of the {} segments of node {}'s commit log into recovery pieces on {} in {} ms",
                  sorted.get(), segments, node, sorters,
                  java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
        })
        .exceptionally(err -> {
          LOG.warn("sorting node {}'s commit log across the nodes failed; its tablets' new owners sort it: {}", node,
              err.toString());
          return null;
        });
  }

  /** Has {@code sorter} sort the next segment of {@code work}, then the next, until none is left or it fails. */
  private static void next(ActorSystem<?> system, ActorRef<NodeRequests.Command> sorter, String name,
      Queue<String[]> work, Duration askTimeout, AtomicInteger sorted, CompletableFuture<Void> done) {
    String[] piece;
    synchronized (work) {
      piece = work.poll();
    }
    if (piece == null) {
      done.complete(null);
      return;
    }
    AskPattern.<NodeRequests.Command, StatusReply<Done>>ask(sorter,
        r -> new NodeRequests.SortPiece(piece[0], piece[1], r), askTimeout, system.scheduler())
        .whenComplete((reply, err) -> {
          if (err == null && reply.isSuccess()) {
            sorted.incrementAndGet();
            next(system, sorter, name, work, askTimeout, sorted, done);
          } else {
            LOG.warn("node {} did not sort {}/{}: {}; the tablets that need it sort it", name, piece[0], piece[1],
                err != null ? err.toString() : reply.getError().getMessage());
            done.complete(null);
          }
        });
  }
}
