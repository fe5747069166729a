package io.tabula.actors.tablet;

import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.tablet.TabletActor.Command;
import io.tabula.persistence.tablet.TabletUnavailableException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * A tablet actor's last state, once it stops serving (a hand-over, an idle close, either half
 * of a merge): what is in flight finishes (writes, row-atomic requests, drops, a split under
 * way), then the tablet is flushed and closed and the close's own work runs; the master hears
 * that this node's log no longer holds the tablet, the close's caller learns how it ended,
 * and the actor stops. Requests that still come are refused as moved, to be retried where the
 * tablet goes. The actor has already taken the tablet's reads off the node's list and stopped
 * its timers.
 *
 * <p>Owned by the actor's thread, as the actor's other parts are.
 */
final class TabletClosing {
  /** Work done once the tablet is closed cleanly, on the blocking-I/O dispatcher. */
  @FunctionalInterface
  interface AfterClose {
    void run() throws IOException;
  }

  /**
   * How a close ended: {@code failure} is null when the tablet was flushed and closed (and the
   * close's own work done); {@code splitMeanwhile} when a split under way closed it first (an
   * expected race: its children are placed anew).
   */
  record Ended(Throwable failure, boolean splitMeanwhile) {}

  private final ActorContext<Command> ctx;
  private final TabletNode node;
  private final TabletInfo info;
  /** The opening's number, which the close report carries ({@link LocalTablets#nextOpening}). */
  private final long opening;
  private final TabletWrites writes;
  private final TabletSplits splits;
  private final Executor blockingIo;
  /** What the close is, as refusals say it ("handed over", "closed, idle", ...). */
  private final String what;
  private final AfterClose after;
  private final Consumer<Ended> done;

  TabletClosing(ActorContext<Command> ctx, TabletNode node, TabletInfo info, long opening, TabletWrites writes,
      TabletSplits splits, Executor blockingIo, String what, AfterClose after, Consumer<Ended> done) {
    this.ctx = ctx;
    this.node = node;
    this.info = info;
    this.opening = opening;
    this.writes = writes;
    this.splits = splits;
    this.blockingIo = blockingIo;
    this.what = what;
    this.after = after;
    this.done = done;
  }

  /** The state that waits for what is in flight, then closes the tablet. */
  Behavior<Command> behavior() {
    return closing(false);
  }

  private Behavior<Command> closing(boolean closed) {
    if (!closed && writes.idle() && !splits.running()) {
      ctx.pipeToSelf(CompletableFuture.runAsync(() -> {
        try {
          node.server().closeTablet(info.id());
          after.run();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }, blockingIo), (ok, err) -> new TabletActor.HandedOff(err));
      return closing(true);
    }
    return Behaviors.receive(Command.class)
        .onMessage(TabletActor.HandedOff.class, h -> {
          writes.closed();
          // Flushed or not, the tablet is closed here: it serves no more, and every write of it this
          // node acknowledged came before this report (docs/fencing.md, "Before a tablet opens").
          node.master().tell(new Master.ReportClosed(info.id(), node.server().logName(), h.failure() == null,
              opening));
          done.accept(new Ended(h.failure(), false));
          return Behaviors.stopped();
        })
        .onMessage(TabletActor.WriteFinished.class, w -> {
          writes.writeFinished(w);
          return closing(closed);
        })
        .onMessage(TabletActor.RowDecided.class, d -> {
          writes.decided(d);
          return closing(closed);
        })
        .onMessage(TabletActor.TokenChecked.class, t -> {
          // an idempotent write holds its row until this: the close waits for its writes to end
          writes.tokenChecked(t);
          return closing(closed);
        })
        .onMessage(TabletActor.DropDone.class, d -> {
          writes.dropped(d);
          return closing(closed);
        })
        .onMessage(TabletActor.SplitDone.class, d -> {
          if (!splits.finished(d)) {
            return closing(closed);
          }
          // The split closed the tablet: the children are placed anew; a record the master misses is
          // made again by whoever opens the parent next (its manifest says it split).
          writes.closed();
          splits.record(d);
          done.accept(new Ended(new TabletUnavailableException("tablet " + info.id() + " split meanwhile"), true));
          return Behaviors.stopped();
        })
        .onMessageEquals(TabletActor.RetryHeldWrites.INSTANCE, () -> {
          writes.retryHeld();
          return closing(closed);
        })
        .onMessageEquals(TabletActor.Tick.INSTANCE, Behaviors::same)
        .onAnyMessage(c -> {
          TabletActor.refuseMoved(c, "tablet " + info.id() + " is being " + what);
          return Behaviors.same();
        }).build();
  }
}
