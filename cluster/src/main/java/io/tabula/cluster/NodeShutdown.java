package io.tabula.cluster;

import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.cluster.metrics.NodeMetrics;
import io.tabula.cluster.sharding.TabletShards;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletServer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a node lets go: a deleted table's tablets retired, the node's tablets drained to the
 * other nodes before it stops, the gRPC port unbound and the engine closed (memtables
 * flushed) in coordinated shutdown.
 */
final class NodeShutdown {
  private static final Logger LOG = LoggerFactory.getLogger(NodeShutdown.class);

  private NodeShutdown() {}

  /**
   * Removes a table the master has deleted from this node: every open tablet of it retires
   * (its actor stops serving it, closes it and refuses what comes later), then the engine
   * drops what is left of it. Completes when both are done; a tablet that does not answer in
   * time is logged. The files stay: only the master deletes them, with its sweep
   * ({@code FileSweeper}), so that a node whose view lags never deletes a newer table's files.
   */
  static CompletionStage<Void> dropTable(ActorSystem<?> system, TabletShards tablets, TabletServer engine,
      String table, Duration timeout) {
    List<CompletableFuture<Void>> retired = new java.util.ArrayList<>();
    for (Tablet t : engine.tablets()) {
      if (t.table().equals(table)) {
        retired.add(tablets.tablet(t.id())
            .<Done>askWithStatus(TabletActor.Retire::new, timeout).toCompletableFuture()
            .handle((done, err) -> {
              if (err != null) {
                LOG.warn("tablet {} of deleted table {} did not retire: {}", t.id(), table, err.toString());
              }
              return null;
            }));
      }
    }
    Executor blockingIo = system.dispatchers().lookup(DispatcherSelector.blocking());
    return CompletableFuture.allOf(retired.toArray(CompletableFuture[]::new))
        .thenRunAsync(() -> engine.closeTable(table), blockingIo);
  }

  /**
   * A node that leaves gracefully (SIGTERM, coordinated shutdown, or drained on request)
   * first moves its tablets to the other nodes, with graceful moves, before it stops serving:
   * it asks the master to drain it, again every half second, until the directory shows it
   * owning none, or {@code drain-timeout} has passed (what is left is then handed over by
   * sharding as the node stops, and placed by the master once it is gone). Alone in the
   * cluster, it has nowhere to move them and skips this.
   */
  static void registerDrain(ActorSystem<?> system, Cluster cluster, NodeSettings settings,
      DirectoryCache directory, ActorRef<Master.Command> master, TabletServer engine) {
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "drain-tablets", () -> {
      if (!mayDrain(system, engine)) {
        return CompletableFuture.completedFuture(Done.getInstance());
      }
      boolean othersUp = ClusterNodes.all(cluster).stream().anyMatch(n -> n.up() && !n.name().equals(settings.name()));
      if (!othersUp || directory.get().tabletsPerNode().getOrDefault(settings.name(), 0) == 0) {
        return CompletableFuture.completedFuture(Done.getInstance());
      }
      LOG.info("draining: moving this node's {} tablets to the other nodes before stopping",
          directory.get().tabletsPerNode().getOrDefault(settings.name(), 0));
      CompletableFuture<Done> drained = new CompletableFuture<>();
      long deadline = System.nanoTime() + settings.drainTimeout().toNanos();
      drainStep(system, settings, directory, master, deadline, drained);
      return drained;
    });
  }

  private static void drainStep(ActorSystem<?> system, NodeSettings settings, DirectoryCache directory,
      ActorRef<Master.Command> master, long deadline, CompletableFuture<Done> drained) {
    int left = directory.get().tabletsPerNode().getOrDefault(settings.name(), 0);
    if (left == 0 || System.nanoTime() > deadline) {
      if (left > 0) {
        LOG.warn("draining: {} tablets were not moved within {}; they are handed over as the node stops", left,
            settings.drainTimeout());
      } else {
        LOG.info("draining: done, no tablet left on this node");
      }
      drained.complete(Done.getInstance());
      return;
    }
    master.tell(new Master.Drain(settings.name(), system.ignoreRef()));
    system.scheduler().scheduleOnce(Duration.ofMillis(500), () -> drainStep(system, settings, directory, master,
        deadline, drained), system.executionContext());
  }

  /**
   * A node that was downed (the cluster decided it is gone), or whose log is lost (fenced: its
   * tablets are being recovered from its log elsewhere; or an fsync failed: they are to be)
   * has nothing to hand over: it stops at once.
   */
  private static boolean mayDrain(ActorSystem<?> system, TabletServer engine) {
    var reason = CoordinatedShutdown.get(system).getShutdownReason();
    return !engine.isLogLost() && !(reason.isPresent()
        && (reason.get() == CoordinatedShutdown.clusterDowningReason() || reason.get() == LogLossStop.REASON));
  }

  /** Unbinds the gRPC port (if the node has one) and closes the metrics (if kept) as the node stops. */
  static void registerUnbind(ActorSystem<?> system, ServerBinding binding, NodeMetrics metrics) {
    CoordinatedShutdown cs = CoordinatedShutdown.get(system);
    if (binding != null) {
      cs.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "unbind-grpc", () ->
          binding.unbind().thenApply(x -> Done.getInstance()));
    }
    if (metrics != null) {
      cs.addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "close-metrics", () -> {
        metrics.close();
        return CompletableFuture.completedFuture(Done.getInstance());
      });
    }
  }

  /**
   * Closes the engine (memtables flushed) and the storage root's client as the node stops;
   * registered as soon as the engine is open, so a start that fails later still closes it.
   */
  static void registerEngineClose(ActorSystem<?> system, TabletServer engine, Storage storage) {
    CoordinatedShutdown cs = CoordinatedShutdown.get(system);
    cs.addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "close-engine", () ->
        CompletableFuture.supplyAsync(() -> {
          try {
            engine.close(); // abandons, if the log is lost
            LOG.info(engine.isAbandoned() ? "storage engine stopped without flushing: its commit log is lost, or an fsync of its storage "
                + "failed" : "storage engine closed: memtables flushed");
          } catch (IOException e) {
            LOG.error("closing the storage engine failed; the commit log still has the writes", e);
          }
          if (storage instanceof java.io.Closeable c) { // an HDFS client and its threads
            try {
              c.close();
            } catch (IOException e) {
              LOG.warn("closing the storage root's client failed: {}", e.toString());
            }
          }
          return Done.getInstance();
        }));
  }

  /** How long a system whose coordinated shutdown has run through may still take to terminate. */
  static final Duration TERMINATE_AFTER_SHUTDOWN = Duration.ofSeconds(5);

  /**
   * Waits until {@code system} has stopped: terminated, or, once its coordinated shutdown has
   * run through every phase (each bounded by its phase's timeout), {@link
   * #TERMINATE_AFTER_SHUTDOWN} more; or {@code atMost} in all. Returns whether it terminated.
   * Pekko's Artery over TLS (1.2) may keep a connection to another node open until that node
   * closes it, and the system's termination waits for it (apache/pekko#3247): the node has
   * left its cluster, closed its storage and unbound its ports by then, so what remains is
   * threads, which a process exiting ends.
   */
  static boolean awaitStopped(ActorSystem<?> system, Duration atMost) throws InterruptedException {
    long deadline = System.nanoTime() + atMost.toNanos();
    CompletableFuture<Done> terminated = system.getWhenTerminated().toCompletableFuture();
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
    while (!terminated.isDone() && shutdown.getShutdownReason().isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    try {
      if (!terminated.isDone() && shutdown.getShutdownReason().isPresent()) {
        // the run under way: asking again starts nothing new
        shutdown.runAll(shutdown.getShutdownReason().get()).toCompletableFuture()
            .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
      terminated.get(Math.max(0, Math.min(TERMINATE_AFTER_SHUTDOWN.toNanos(), deadline - System.nanoTime())),
          TimeUnit.NANOSECONDS);
      return true;
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      LOG.warn("the node's actor system did not finish terminating ({}); its ports are unbound and its storage"
          + " closed, so it is left to the process's exit", e.toString());
      return false;
    }
  }
}
