package io.tabula.actors.tablet;

import io.tabula.persistence.changes.Change;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletChangeLog;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.pattern.StatusReply;

/**
 * A tablet actor's answer to {@link TabletActor.ReadChanges} (docs/change-streams.md): the
 * changes its memtables hold after a sequence, read from the tablet's concurrent structures
 * off the actor's thread when it must wait. A reader that has caught up waits for the next
 * visible write, or the time it gave, whichever comes first, so a stream's new changes reach
 * it as they are acknowledged and its heartbeats keep their time, without polling.
 *
 * <p>An answer must fit the cluster transport's frame: a single change larger than the bytes
 * asked for is not sent; the memtable is flushed instead, and the reader finds the change in
 * the tablet's change log on the storage. Stateless.
 */
public final class TabletChangeReads {
  private TabletChangeReads() {}

  /** The answer to {@link TabletActor.ReadChanges}: {@link TabletChangeLog.InMemory}'s fields, as they travel between nodes. */
  public record ChangesRead(List<Change> changes, boolean complete, long visible, long watermarkMicros)
      implements KryoSerializable {}

  static Behavior<TabletActor.Command> read(Tablet tablet, TabletActor.ReadChanges r, Executor blockingIo,
      Behavior<TabletActor.Command> same) {
    try {
      TabletChangeLog log = tablet.changes();
      TabletChangeLog.InMemory now = log.read(r.after(), r.maxBytes());
      if (!now.changes().isEmpty() || !now.complete() || r.waitMillis() <= 0) {
        r.replyTo().tell(StatusReply.success(answer(fitted(tablet, now, r.maxBytes()))));
        return same;
      }
      log.visibleAfter(r.after(), r.waitMillis())
          .thenApplyAsync(x -> fitted(tablet, log.read(r.after(), r.maxBytes()), r.maxBytes()), blockingIo)
          .whenComplete((read, err) -> r.replyTo().tell(err == null ? StatusReply.success(answer(read))
              : TabletActor.refusal(err instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                  ? c.getCause() : err)));
    } catch (RuntimeException e) {
      r.replyTo().tell(TabletActor.refusal(e));
    }
    return same;
  }

  private static ChangesRead answer(TabletChangeLog.InMemory m) {
    return new ChangesRead(new java.util.ArrayList<>(m.changes()), m.complete(), m.visible(),
        m.watermarkMicros());
  }

  /** {@code read}, unless its one change is larger than {@code maxBytes}: then none, and a flush to bring it to the log. */
  private static TabletChangeLog.InMemory fitted(Tablet tablet, TabletChangeLog.InMemory read, long maxBytes) {
    if (read.changes().size() != 1 || read.changes().get(0).approximateBytes() <= maxBytes) {
      return read;
    }
    CompletableFuture<Void> flushed = tablet.freezeAndFlush();
    flushed.exceptionally(e -> null); // a failed flush is kept for the tablet's writers (and metrics); the reader asks again
    return new TabletChangeLog.InMemory(new java.util.ArrayList<>(), false, read.visible(), 0);
  }
}
