package io.tabula.actors.tablet;

import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.tablet.Tablet;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.StatusReply;

/**
 * The automatic split of one tablet (paper §5.3), run for its {@link TabletActor}: when the
 * tablet has grown past {@code splitBytes}, flush it while it still serves, cut it at its
 * middle row into two children on the blocking-I/O dispatcher, and have the master record
 * the split. The steps come back to the actor as {@link TabletActor.SplitDone} and
 * {@link TabletActor.SplitRecorded}; the actor decides what it serves meanwhile (after the
 * engine split it refuses every request as moved).
 *
 * <p>Owned by the actor's thread: every method is called from the actor's message handling,
 * and the work off the mailbox touches none of these fields.
 */
final class TabletSplits {
  private final ActorContext<TabletActor.Command> ctx;
  private final TabletNode node;
  private final Tablet tablet;
  private final TabletInfo info;
  private final Executor blockingIo;
  private boolean running;
  /** The size at which the last split attempt found no split point: retry only after real growth. */
  private long noSplitPointAt;
  /** When the running split started, for its log lines. */
  private long startNanos;
  /** Whether the running split is a hot tablet's (at the row that halves its load), not a large one's. */
  private boolean hot;

  TabletSplits(ActorContext<TabletActor.Command> ctx, TabletNode node, Tablet tablet, TabletInfo info,
      Executor blockingIo) {
    this.ctx = ctx;
    this.node = node;
    this.tablet = tablet;
    this.info = info;
    this.blockingIo = blockingIo;
  }

  /** Whether a split is under way (the actor does no other periodic work then). */
  boolean running() {
    return running;
  }

  /** Whether a tablet of {@code size} bytes should split now: past the threshold, and grown since a failed try. */
  boolean due(long size) {
    return size > node.settings().splitBytes() && size > noSplitPointAt + noSplitPointAt / 4;
  }

  /**
   * Starts a split: merges are held, the tablet is flushed while it keeps serving, then cut
   * at its middle row. Ends with a {@link TabletActor.SplitDone} to the actor.
   */
  void start() {
    start(null);
  }

  /**
   * A hot tablet's split, which the master asks for: at the row that halves the tablet's
   * recently sampled load ({@link TabletLoad#splitRow}), not at the middle of its bytes. Nothing
   * happens if a split is under way or no row halves the load (one row carries most of it).
   */
  void startHot(TabletLoad load) {
    if (running) {
      return;
    }
    Optional<byte[]> row = load.splitRow(info.startRow(), info.endRow());
    if (row.isEmpty()) {
      ctx.getLog().info("tablet {} is hot, but no row halves its sampled load: not split", info.id());
      return;
    }
    ctx.getLog().info("tablet {} is hot: splitting it at {}, which halves its recent load", info.id(),
        ByteArrays.show(row.get()));
    hot = true;
    start(row.get());
  }

  /** Starts a split at {@code at}, or at the middle row if null. */
  private void start(byte[] at) {
    running = true;
    startNanos = System.nanoTime();
    String leftId = newTabletId();
    String rightId = newTabletId();
    ActorRef<TabletActor.Command> self = ctx.getSelf();
    CompletableFuture.runAsync(() -> {
      tablet.holdMerges(true);
      try {
        tablet.freezeAndFlush().join();
        long flushed = System.nanoTime();
        Optional<byte[]> row = at != null ? Optional.of(at) : tablet.midRow();
        if (row.isEmpty()) {
          tablet.holdMerges(false);
          self.tell(new TabletActor.SplitDone(null, leftId, rightId, "no split point", flushed));
          return;
        }
        node.server().split(info.id(), row.get(), leftId, rightId);
        self.tell(new TabletActor.SplitDone(row.get(), leftId, rightId, null, flushed));
      } catch (IOException | RuntimeException e) {
        tablet.holdMerges(false);
        self.tell(new TabletActor.SplitDone(null, leftId, rightId, String.valueOf(e.getMessage()), System.nanoTime()));
      }
    }, blockingIo);
  }

  /**
   * Takes the outcome of the engine's split: true if the tablet split (the caller stops
   * serving it and calls {@link #record}), false if it did not (it keeps serving and tries
   * again only once it has grown by a quarter).
   */
  boolean finished(TabletActor.SplitDone d) {
    if (d.row() == null) {
      ctx.getLog().info("tablet {} did not split: {}", info.id(), d.error());
      if (!hot) {
        noSplitPointAt = tablet.approximateRangeBytes();
      }
      running = false;
      hot = false;
      return false;
    }
    long now = System.nanoTime();
    ctx.getLog().info("tablet {} split{} at {} into {} and {} in {} ms, the last {} ms without taking writes",
        info.id(), hot ? " (hot)" : "", ByteArrays.show(d.row()), d.leftId(), d.rightId(), (now - startNanos) / 1_000_000,
        (now - d.flushedNanos()) / 1_000_000);
    return true;
  }

  /** Asks the master to record the split; the answer comes back as a {@link TabletActor.SplitRecorded}. */
  void record(TabletActor.SplitDone d) {
    ctx.pipeToSelf(AskPattern.<Master.Command, StatusReply<Done>>ask(node.master(),
        r -> new Master.RecordSplit(info.table(), info.id(), d.row(), d.leftId(), d.rightId(), r),
        Duration.ofSeconds(5), ctx.getSystem().scheduler()), (ok, err) ->
        new TabletActor.SplitRecorded(err == null && ok.isSuccess()));
  }

  /** Logs that the master recorded the split. */
  void recorded() {
    ctx.getLog().info("tablet {}: the master recorded its split {} ms after it started", info.id(),
        (System.nanoTime() - startNanos) / 1_000_000);
  }

  /** A fresh id for a split child ({@link io.tabula.actors.master.TabletIds#fresh}). */
  private String newTabletId() {
    return io.tabula.actors.master.TabletIds.fresh(info.table());
  }
}
