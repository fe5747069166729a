package io.tabula.actors.tablet;

import io.tabula.actors.Stages;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.storage.StorageSyncFailedException;
import io.tabula.persistence.tablet.ManifestCodec;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletManifest;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.pattern.StatusReply;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a tablet actor comes to serve its tablet (paper §5.2, a tablet server loading a
 * tablet): ask the master whether it may open it and which logs it replays (the master answers
 * once every earlier writer of the tablet is fenced or has released it: docs/fencing.md), open
 * it from its manifest on the shared storage (creating a new tablet's, replaying what those
 * logs still hold of it), then have the master record that this node's log now holds its
 * writes (refused if a log it names was not replayed). Only then does the actor take requests. The master refuses that record while the tablet is being merged, so a
 * tablet closed for a merge is never served again behind the merge's back. Runs off the actor's thread; the file work on the blocking-I/O
 * dispatcher.
 */
final class TabletOpening {
  private static final Logger LOG = LoggerFactory.getLogger(TabletOpening.class);
  private static final Duration ASK = Duration.ofSeconds(5);

  /**
   * The tablet and its directory entry; both null when this node is not to serve it (split,
   * deleted, unknown), or, with {@code notNow}, not now (it is being merged: the actor stops,
   * and a later request starts it again). {@code opening} numbers the opening among this
   * node's ({@link LocalTablets#nextOpening}); its close report carries it.
   */
  record Result(Tablet tablet, TabletInfo info, boolean notNow, long opening) {
    static final Result NONE = new Result(null, null, false, 0);
    static final Result NOT_NOW = new Result(null, null, true, 0);
  }

  private TabletOpening() {}

  /** Requests that may wait while the tablet opens; more are refused as moved, to be retried. */
  private static final int OPENING_STASH = 10_000;

  /**
   * The behavior of a tablet actor until its tablet is open: requests wait in a stash, then
   * meet the tablet served ({@link TabletActor#serving}), not served here, or failed.
   */
  static Behavior<TabletActor.Command> behavior(String tabletId, TabletNode node,
      java.util.function.Consumer<org.apache.pekko.actor.typed.ActorRef<TabletActor.Command>> stopWhenIdle) {
    return Behaviors.withStash(OPENING_STASH, stash -> Behaviors.setup(ctx -> {
      Executor io = ctx.getSystem().dispatchers().lookup(DispatcherSelector.blocking());
      ctx.pipeToSelf(open(node, tabletId, ctx.getSystem(), io), TabletActor.Opened::new);
      return Behaviors.receive(TabletActor.Command.class)
          .onMessage(TabletActor.Opened.class, o -> {
            if (o.failure() != null) {
              StorageSyncFailedException sync = syncFailure(o.failure());
              if (sync != null) {
                // The node stops for it, and says so once with the stack (LogLossStop).
                ctx.getLog().warn("tablet {} could not be opened on this node: {}", tabletId, sync.getMessage());
              } else {
                ctx.getLog().error("tablet {} could not be opened on this node", tabletId, o.failure());
              }
              return stash.unstashAll(failed(tabletId, o.failure()));
            }
            if (o.result().notNow()) {
              stash.forEach(c -> TabletActor.refuseMoved(c, "tablet " + tabletId
                  + " is being merged; look the row up again"));
              stash.clear();
              return Behaviors.stopped();
            }
            if (o.result().tablet() == null) {
              return stash.unstashAll(TabletActor.gone(tabletId));
            }
            return stash.unstashAll(TabletActor.serving(ctx, node, o.result(), stopWhenIdle));
          })
          .onAnyMessage(c -> {
            if (stash.isFull()) {
              TabletActor.refuseMoved(c, "tablet " + tabletId + " is opening; try again");
            } else {
              stash.stash(c);
            }
            return Behaviors.same();
          }).build();
    }));
  }

  /** The failed fsync among {@code failure}'s causes, or null. */
  private static StorageSyncFailedException syncFailure(Throwable failure) {
    for (Throwable e = failure; e != null; e = e.getCause()) {
      if (e instanceof StorageSyncFailedException s) {
        return s;
      }
    }
    return null;
  }

  /** A tablet that could not be opened here (its files are damaged or unreadable): every request is refused with why. */
  private static Behavior<TabletActor.Command> failed(String tabletId, Throwable failure) {
    Refusal why = Refusal.of(ErrorCode.UNAVAILABLE, "tablet " + tabletId + " could not be opened: "
        + Refusal.unwrap(failure).getMessage());
    return Behaviors.receive(TabletActor.Command.class).onAnyMessage(c -> {
      if (c instanceof TabletActor.Request r) {
        r.replyTo().<Object>unsafeUpcast().tell(why.reply());
      } else if (c == TabletActor.HandOff.INSTANCE) {
        return Behaviors.stopped();
      }
      return Behaviors.same();
    }).build();
  }

  static CompletionStage<Result> open(TabletNode node, String tabletId, ActorSystem<?> system, Executor blockingIo) {
    return directoryWith(node, tabletId, system)
        .thenCompose(d -> mayOpen(node, tabletId, system, 0))
        .thenCompose(permit -> {
          if (permit.result() != null) {
            return CompletableFuture.completedFuture(permit.result());
          }
          return CompletableFuture.supplyAsync(() -> openFiles(node, permit.permit(), system), blockingIo)
              .thenCompose(o -> o == null ? CompletableFuture.completedFuture(Result.NONE)
                  : reportOpened(node, o, system, 0));
        });
  }

  /** The master's answer to {@link Master.MayOpen}: a permit, or the result when there is none. */
  private record Permission(Master.OpenPermit permit, Result result) {}

  /**
   * Asks the master whether this node may open the tablet, and which logs it replays
   * (docs/fencing.md, "Before a tablet opens"): asked again while the master fences the logs
   * of the nodes that served it before, or waits for their close reports, or does not answer
   * (a master moving to another node), every {@code 50 ms} doubling up to a second.
   */
  private static CompletionStage<Permission> mayOpen(TabletNode node, String tabletId, ActorSystem<?> system,
      int attempt) {
    return Stages.direct(AskPattern.<Master.Command, StatusReply<Master.OpenPermit>>ask(node.master(),
        r -> new Master.MayOpen(tabletId, node.name(), node.server().logName(), r), ASK,
        system.scheduler())).handle((reply, err) -> {
          if (err == null && reply.isSuccess()) {
            return CompletableFuture.completedFuture(new Permission(reply.getValue(), null));
          }
          if (err == null && Refusal.is(reply.getError(), ErrorCode.NOT_FOUND)) {
            return CompletableFuture.completedFuture(new Permission(null, Result.NONE));
          }
          if (err == null && Refusal.is(reply.getError(), ErrorCode.FAILED_PRECONDITION)) {
            return CompletableFuture.completedFuture(new Permission(null, Result.NOT_NOW));
          }
          if (attempt % 10 == 9) {
            LOG.info("tablet {}: not yet allowed to open ({}); asking again", tabletId,
                err != null ? err.toString() : reply.getError().getMessage());
          }
          long delayMs = Math.min(1_000, 50L << Math.min(attempt, 5));
          return CompletableFuture.supplyAsync(() -> null,
                  CompletableFuture.delayedExecutor(delayMs, TimeUnit.MILLISECONDS))
              .thenCompose(x -> mayOpen(node, tabletId, system, attempt + 1));
        }).thenCompose(x -> x);
  }

  /**
   * The directory, asked again of the master once when it does not have the tablet yet (it may
   * be new): the node's copy then holds the tablet's table, whose schema the engine opens it with.
   */
  private static CompletionStage<Directory> directoryWith(TabletNode node, String tabletId, ActorSystem<?> system) {
    Directory d = node.directory().get();
    if (d.tablet(tabletId) != null) {
      return CompletableFuture.completedFuture(d);
    }
    return node.directory().refresh(node.master(), system, ASK).exceptionally(err -> node.directory().get());
  }

  private record Opening(TabletInfo info, TabletServer.Opened opened, long number) {}

  /** Opens the tablet's files as the master's {@code permit} says: its range, and the logs to replay. */
  private static Opening openFiles(TabletNode node, Master.OpenPermit permit, ActorSystem<?> system) {
    TabletInfo info = permit.tablet();
    String tabletId = info.id();
    TabletServer server = node.server();
    java.util.List<String> logs = permit.logs();
    // Without a manifest, a tablet is new only if the directory knows of no data of it.
    TabletServer.IfNoManifest ifNone = info.files().isEmpty() && logs.isEmpty() ? TabletServer.IfNoManifest.CREATE
        : TabletServer.IfNoManifest.FAIL;
    try {
      TabletServer.Opened o = server.openTablet(info.table(), tabletId, info.startRow(), info.endRow(), logs, ifNone);
      if (o == null) {
        reportFinishedSplit(node, ManifestCodec.read(server.env().storage(), Tablet.dirOf(info.table(), tabletId)),
            system);
        return null;
      }
      if (o.replayedRecords() > 0) {
        LOG.info("tablet {}: replayed {} records from the logs {}", tabletId, o.replayedRecords(),
            o.recoveredLogs());
      }
      return new Opening(info, o, node.local().nextOpening());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open tablet " + tabletId + ": " + e.getMessage(), e);
    }
  }

  /** A split the master may not have heard of (the node stopped in between): tell it again. */
  private static void reportFinishedSplit(TabletNode node, TabletManifest m, ActorSystem<?> system) {
    if (m.state() == TabletManifest.State.SPLIT && m.split() != null) {
      node.master().tell(new Master.RecordSplit(m.table(), m.tabletId(), m.split().splitRow(), m.split().leftId(),
          m.split().rightId(), system.ignoreRef()));
    }
  }

  /**
   * Has the master record the opening, asking again each second while it does not answer
   * (a master moving to another node); completes with the tablet once recorded. A master
   * that no longer knows the tablet (its table was deleted meanwhile) closes it again.
   */
  private static CompletionStage<Result> reportOpened(TabletNode node, Opening o, ActorSystem<?> system,
      int attempt) {
    String id = o.info().id();
    Tablet t = o.opened().tablet();
    return Stages.direct(AskPattern.<Master.Command, StatusReply<Done>>ask(node.master(),
        r -> new Master.ReportOpened(id, node.name(), node.server().logName(), o.opened().recoveredLogs(), o.number(),
            r), ASK,
        system.scheduler())).handle((reply, err) -> {
          if (err == null && reply.isSuccess()) {
            return CompletableFuture.completedFuture(new Result(t, o.info(), false, o.number()));
          }
          if (err == null && Refusal.is(reply.getError(), ErrorCode.NOT_FOUND)) {
            node.server().discardTablet(id);
            return CompletableFuture.completedFuture(Result.NONE);
          }
          if (err == null && Refusal.is(reply.getError(), ErrorCode.FAILED_PRECONDITION)) {
            // Being merged, placed elsewhere, or opened without a log it must replay: it takes no
            // write. Given up, not discarded: a tablet that was open here already (its actor
            // started again) may have writes only in this node's log, which must stay.
            node.server().giveUpTablet(id);
            return CompletableFuture.completedFuture(Result.NOT_NOW);
          }
          if (attempt % 10 == 0) {
            LOG.info("tablet {}: the master has not recorded its opening yet ({}); asking again", id,
                err != null ? err.toString() : reply.getError().getMessage());
          }
          return CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS))
              .thenCompose(x -> reportOpened(node, o, system, attempt + 1));
        }).thenCompose(x -> x);
  }
}
