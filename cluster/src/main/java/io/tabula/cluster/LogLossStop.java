package io.tabula.cluster;

import io.tabula.cluster.sharding.TabletShards;
import io.tabula.persistence.storage.StorageSyncFailedException;
import io.tabula.persistence.storage.SyncWatchingStorage;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.LogFencedException;
import io.tabula.persistence.wal.LogSyncFailedException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node stops when its commit log acknowledges nothing more: it drops its tablets without
 * flushing and shuts down (docs/fencing.md).
 * <ul>
 *   <li>its folder is fenced: the master placed this node's tablets elsewhere, to be recovered
 *       from the log, and a flush would change files another node now owns. The log finds it
 *       at its next write; a node without writes looks every {@link #FENCE_LOOK}.
 *   <li>an fsync failed, of the log ({@link LogSyncFailedException}) or of any other file or
 *       folder of the node's storage (a manifest as a tablet opens, an SSTable as it flushes:
 *       {@link SyncWatchingStorage}): the disk can no longer make a write durable, so the node
 *       cannot serve. A failure outside the log would otherwise leave the node up, owning
 *       tablets it cannot open, for as long as no write reaches its log. Once it has left, the
 *       master fences its log and places its tablets on other nodes, which replay what it
 *       acknowledged.
 * </ul>
 * Whichever of these comes first is logged, once, with its stack.
 */
final class LogLossStop {
  private static final Logger LOG = LoggerFactory.getLogger(LogLossStop.class);

  /** How often a node looks whether its commit log was fenced, besides at each write. */
  private static final Duration FENCE_LOOK = Duration.ofMillis(500);

  /** Why a node stops when its commit log is lost: fenced, or an fsync of its storage failed. */
  static final CoordinatedShutdown.Reason REASON = new CoordinatedShutdown.Reason() {
    @Override
    public String toString() {
      return "commit log lost (fenced), or an fsync of the storage failed";
    }
  };

  private LogLossStop() {}

  /**
   * Stops the node of {@code system} once {@code engine}'s commit log, {@code logs/<logName>},
   * is lost, or once {@code syncFailed}: an fsync of the node's storage failed.
   */
  static void watch(ActorSystem<?> system, TabletServer engine, String logName,
      CompletableFuture<StorageSyncFailedException> syncFailed) {
    CompletableFuture<IOException> lost = new CompletableFuture<>();
    engine.whenLogLost().thenAccept(lost::complete);
    syncFailed.thenAccept(lost::complete);
    var look = system.scheduler().scheduleWithFixedDelay(FENCE_LOOK, FENCE_LOOK, () -> {
      try {
        if (engine.isFenced()) {
          lost.complete(new LogFencedException("logs/" + logName));
        }
      } catch (RuntimeException e) {
        // The storage could not be asked (an HDFS namenode failing over, say). A task that
        // throws is cancelled by the scheduler, so this one reports and looks again next time.
        LOG.warn("could not look whether commit log logs/{} is fenced; looking again in {} ms: {}", logName,
            FENCE_LOOK.toMillis(), e.toString());
      }
    }, system.dispatchers().lookup(DispatcherSelector.blocking()));
    lost.thenAcceptAsync(why -> {
      look.cancel();
      if (why instanceof LogSyncFailedException) {
        LOG.error("commit log logs/{} failed an fsync: this node can make no write durable, so it stops serving its "
            + "tablets, without flushing, and shuts down; other nodes recover them from its log", logName, why);
      } else if (why instanceof StorageSyncFailedException s) {
        LOG.error("the storage failed an fsync of {}: this node can make no write durable, so it stops serving its "
            + "tablets, without flushing, and shuts down; other nodes recover them from its commit log logs/{}",
            s.path(), logName, why);
      } else {
        LOG.warn("commit log logs/{} is fenced: this node's tablets are being recovered by other nodes; it stops "
            + "serving them, without flushing, and shuts down", logName);
      }
      try {
        engine.abandon();
        TabletShards.stopRegions(system);
      } catch (RuntimeException e) {
        // A bug: whatever it left undone, the node must still stop (nothing else would stop it).
        LOG.error("dropping this node's tablets failed; it shuts down all the same", e);
      } finally {
        CoordinatedShutdown.get(system).runAll(REASON);
      }
    }, system.dispatchers().lookup(DispatcherSelector.blocking()));
  }
}
