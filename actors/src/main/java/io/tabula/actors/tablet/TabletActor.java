package io.tabula.actors.tablet;

import io.tabula.actors.Refusals;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletUnavailableException;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.kryo.KryoSerializable;
import io.tabula.streams.filter.CompiledFilter;
import io.tabula.streams.filter.FilteredRow;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.apache.pekko.Done;
import org.apache.pekko.actor.NoSerializationVerificationNeeded;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.stream.SourceRef;

/**
 * One tablet served from this node (paper §5.3): a mailbox around an engine {@link Tablet}.
 * It does not know it is sharded; the cluster module wires it as a Cluster Sharding entity
 * ({@code io.tabula.cluster.sharding.TabletShards}). It never blocks its dispatcher: engine reads,
 * file work and anything that may wait run on the blocking-I/O dispatcher and come back as
 * messages.
 *
 * <ul>
 *   <li>It opens its tablet off its thread ({@link TabletOpening}: from the shared storage,
 *       replaying what logs of earlier incarnations hold of it) and takes requests once the
 *       master has recorded that this node serves it; requests that come meanwhile wait.
 *   <li>A move (paper §5.2) is {@link PrepareMove} (a minor compaction while serving), then
 *       {@link HandOff}: what is in flight finishes, the tablet is flushed and closed, and the
 *       actor stops; its next owner opens it with nothing to replay.
 *   <li>Writes, batches, check-and-mutate, read-modify-write and row-range drops go through
 *       {@link TabletWrites}: answered only once durable, ordered per row so that every
 *       read-then-write is atomic ({@link RowGate}), held back (not blocked on) while the
 *       engine's flushes lag behind.
 *   <li>Point reads and scans run on the blocking-I/O dispatcher over an engine snapshot; a
 *       scan is a back-pressured stream handed out as a {@link SourceRef}.
 *   <li>Every {@code checkInterval} it reports its files to the master and splits when it
 *       has grown past {@code splitBytes} ({@link TabletSplits}); the split runs off the mailbox, then the master
 *       records it and this actor only refuses from then on (the children are new entities);
 *       once writes pause it flushes its memtable and compacts its files ({@link QuietCompaction}).
 *   <li>A request this tablet cannot serve (split, closed, unknown) is refused with
 *       {@link ErrorCode#MOVED}: the caller looks the row up again. Every request is answered,
 *       also one that was waiting when the tablet closed.
 * </ul>
 */
public final class TabletActor extends AbstractBehavior<TabletActor.Command> {
  public sealed interface Command extends KryoSerializable {}

  /** A command from outside that is answered with a {@link StatusReply}. */
  public sealed interface Request extends Command {
    ActorRef<? extends StatusReply<?>> replyTo();
  }

  public record Mutate(RowMutation mutation, ActorRef<StatusReply<Done>> replyTo) implements Request {}

  /**
   * Applies each row mutation on its own (each row atomic, rows independent, as MutateRows
   * entries) and replies, once every one is durable or refused, with one outcome per row.
   */
  public record MutateBatch(List<RowMutation> mutations, ActorRef<StatusReply<BatchOutcome>> replyTo)
      implements Request {}

  /** Per row of a {@link MutateBatch}, in order: null if applied, else its refusal. */
  public record BatchOutcome(List<Refusal> refusals) implements KryoSerializable {}

  /**
   * Applies {@code onMatch} if the row has a cell that passes {@code predicate} (a serialized
   * {@link RowFilter}; empty: any cell), else {@code onNoMatch}; replies whether it matched.
   */
  public record CheckAndMutate(byte[] row, byte[] predicate, List<Mutation> onMatch, List<Mutation> onNoMatch,
      ActorRef<StatusReply<Boolean>> replyTo) implements Request {}

  /** Applies the rules in order and replies with the new cells. */
  public record ReadModifyWrite(byte[] row, List<ReadModifyWriteRule> rules, ActorRef<StatusReply<Row>> replyTo)
      implements Request {}

  /** Reads one row through a serialized {@link RowFilter} (empty: all cells). */
  public record ReadRow(byte[] row, byte[] filter, ActorRef<StatusReply<RowResult>> replyTo) implements Request {}

  /** The answer to {@link ReadRow}: the row, or null when nothing passes the filter. */
  public record RowResult(FilteredRow row) implements KryoSerializable {}

  /** Reads several rows of this tablet through one serialized filter, in the order given. */
  public record ReadRows(List<byte[]> rows, byte[] filter, ActorRef<StatusReply<RowsResult>> replyTo)
      implements Request {}

  /** The answer to {@link ReadRows}: the rows asked for that have cells passing the filter, in the order asked. */
  public record RowsResult(List<FilteredRow> rows) implements KryoSerializable {}

  /** Streams the rows of {@code [start, end)} within this tablet through a filter, optionally in reverse. */
  public record OpenScan(byte[] start, byte[] end, byte[] filter, boolean reversed,
      ActorRef<StatusReply<SourceRef<FilteredRow>>> replyTo) implements Request {}

  /** Row samples with cumulative byte offsets, for SampleRowKeys. */
  public record SampleRows(ActorRef<StatusReply<List<Tablet.RowSample>>> replyTo) implements Request {}

  /** The changes after {@code after} in the memtables, or those that come within {@code waitMillis} ({@link TabletChangeReads}). */
  public record ReadChanges(long after, long maxBytes, long waitMillis,
      ActorRef<StatusReply<TabletChangeReads.ChangesRead>> replyTo) implements Request {}

  /** Deletes every row of this tablet starting with {@code prefix} (empty: every row). */
  public record DropRows(byte[] prefix, ActorRef<StatusReply<Done>> replyTo) implements Request {}

  /**
   * The tablet's table was deleted: stop serving it, close it in the engine, answer what was
   * waiting, and refuse as moved from then on (the node drops the files once every tablet has
   * retired). Answered once the tablet is closed.
   */
  public record Retire(ActorRef<StatusReply<Done>> replyTo) implements Request {}

  /**
   * Compacts the memtable while still serving (paper §5.2: the first minor compaction of a
   * move, so that the hand-over has little left to write); answered once done.
   */
  public record PrepareMove(ActorRef<StatusReply<Done>> replyTo) implements Request {}

  /**
   * For a backup (docs/backups.md): flush, then disown and list the tablet's SSTables
   * ({@link io.tabula.persistence.tablet.TabletBackups#list}); answered with its row range and files.
   */
  public record ListForBackup(ActorRef<StatusReply<io.tabula.persistence.backup.BackupManifest.TabletFiles>> replyTo)
      implements Request {}

  /**
   * The tablet is handed to another node (Cluster Sharding's stop message for the entity):
   * once nothing is in flight, the tablet is flushed and closed, so its next owner has
   * nothing to replay, and the actor stops.
   */
  public enum HandOff implements Command { INSTANCE }

  /** The right tablet of a merge closes cleanly and its actor stops; answered once closed. */
  public record CloseForMerge(ActorRef<StatusReply<Done>> replyTo) implements Request {}

  /**
   * The left tablet of a merge closes cleanly, writes the manifest of tablet {@code childId}
   * over itself and {@code rightId} (closed already), and its actor stops; answered once written.
   */
  public record MergeInto(String rightId, String childId, ActorRef<StatusReply<Done>> replyTo) implements Request {}

  /** Starts the tablet's actor where it is placed, so it opens its tablet; nothing is answered. */
  public enum Wake implements Command { INSTANCE }

  /** The tablet is open (or is not to be served here); never leaves the node. */
  record Opened(TabletOpening.Result result, Throwable failure)
      implements Command, NoSerializationVerificationNeeded {}

  /** The tablet was closed for its hand-over; never leaves the node. */
  record HandedOff(Throwable failure) implements Command, NoSerializationVerificationNeeded {}

  /** The engine tablet of a retiring actor is closed; never leaves the node. */
  private record Retired(Retire request, Throwable failure) implements Command, NoSerializationVerificationNeeded {}

  /** Writes to these rows (one entry per write) are durable or failed: no longer in flight. */
  record WriteFinished(List<byte[]> rows) implements Command {}

  enum Tick implements Command { INSTANCE }

  enum RetryHeldWrites implements Command { INSTANCE }

  /**
   * A check-and-mutate or read-modify-write has read its row and decided (or failed to).
   * Never leaves the node: it carries a failure and is not checked for serialization.
   */
  record RowDecided(Request request, TabletWrites.Decision decision, Throwable failure)
      implements Command, NoSerializationVerificationNeeded {}

  /**
   * An idempotent write has looked for its token in its row: {@code seen} (the row mutation
   * was applied before), or not, or the look failed. Never leaves the node.
   */
  record TokenChecked(RowMutation mutation, boolean seen, Throwable failure,
      java.util.function.Consumer<Throwable> done) implements Command, NoSerializationVerificationNeeded {}

  /** A row-range drop has deleted its rows (or failed to); never leaves the node. */
  record DropDone(DropRows request, RowGate.RangeHold hold, Throwable failure)
      implements Command, NoSerializationVerificationNeeded {}

  /**
   * The engine's split of this tablet ended: cut at {@code row} into the two children, or not
   * ({@code row} null, {@code error} why).
   *
   * @param flushedNanos when the split's first flush ended (writes were taken until then)
   */
  record SplitDone(byte[] row, String leftId, String rightId, String error, long flushedNanos)
      implements Command {}

  /** Whether the master recorded this tablet's split. */
  record SplitRecorded(boolean ok) implements Command {}

  /** The master finds the tablet hot: split it at the row that halves its recent load. */
  public enum SplitHot implements Command { INSTANCE }

  private final TimerScheduler<Command> timers;
  private final TabletNode node;
  private final Tablet tablet;
  private final TabletInfo info;
  /** This opening's number among the node's; the close report carries it. */
  private final long opening;
  private final QuietCompaction quiet = new QuietCompaction();
  private final Executor blockingIo;
  /** This tablet's reads, listed in the node's {@link LocalTablets} while this actor serves it. */
  private final TabletReads reads;
  /** Writes and row-atomic requests, ordered per row. */
  private final TabletWrites writes;
  /** This tablet's automatic split. */
  private final TabletSplits splits;
  /** Load and files reported to the master at each tick. */
  private final TabletReports reports;
  /** How often the periodic check runs (stretched while the tablet is quiet). */
  private final TickStretch ticks;
  /** Whether and when it asks to stop, its tablet idle. */
  private final IdleClose idleClose;

  private TabletActor(ActorContext<Command> ctx, TimerScheduler<Command> timers, TabletNode node,
      TabletOpening.Result opened, java.util.function.Consumer<ActorRef<Command>> stopWhenIdle) {
    super(ctx);
    Tablet tablet = opened.tablet();
    TabletInfo info = opened.info();
    this.opening = opened.opening();
    this.idleClose = new IdleClose(node, info.id(), ctx.getSelf(), stopWhenIdle);
    this.timers = timers;
    this.node = node;
    this.tablet = tablet;
    this.info = info;
    this.blockingIo = ctx.getSystem().dispatchers().lookup(DispatcherSelector.blocking());
    this.reads = node.local().serve(info.table(), info.id(), tablet, ctx.getSelf());
    this.writes = new TabletWrites(ctx, timers, tablet, reads, blockingIo, quiet);
    this.splits = new TabletSplits(ctx, node, tablet, info, blockingIo);
    this.reports = new TabletReports(info, tablet, node.master());
    this.ticks = new TickStretch(timers, node.settings().checkInterval());
  }

  /**
   * The actor of tablet {@code tabletId} on {@code node}. It opens the tablet off its thread
   * ({@link TabletOpening}); requests that arrive meanwhile wait, and are served once the
   * tablet is open and the master has recorded that this node serves it.
   */
  public static Behavior<Command> create(String tabletId, TabletNode node) {
    return create(tabletId, node, null);
  }

  /**
   * The actor of tablet {@code tabletId} on {@code node}, as {@link #create(String, TabletNode)},
   * which closes its tablet once it has been idle for {@code tabula.tablet.close-idle-after}: it
   * gives {@code stopWhenIdle} its own reference (sharding's passivation), and its host then
   * sends it a {@link HandOff}. Null: it never closes for being idle.
   */
  public static Behavior<Command> create(String tabletId, TabletNode node,
      java.util.function.Consumer<ActorRef<Command>> stopWhenIdle) {
    return TabletOpening.behavior(tabletId, node, stopWhenIdle);
  }

  /** The actor serving {@code tablet}, open, with its periodic check started. */
  static Behavior<Command> serving(ActorContext<Command> ctx, TabletNode node, TabletOpening.Result opened,
      java.util.function.Consumer<ActorRef<Command>> stopWhenIdle) {
    return Behaviors.withTimers(timers -> {
      timers.startTimerWithFixedDelay(Tick.INSTANCE, node.settings().checkInterval());
      return new TabletActor(ctx, timers, node, opened, stopWhenIdle);
    });
  }

  /**
   * A tablet this node does not serve (split or unknown): every request is refused as moved.
   * The actor stays (it costs a mailbox) rather than stopping, because a sharded entity that
   * stops on its own drops the messages already on their way to it.
   */
  static Behavior<Command> gone(String tabletId) {
    return Behaviors.receive(Command.class).onAnyMessage(c -> {
      if (c == HandOff.INSTANCE) {
        return Behaviors.stopped();
      }
      refuseMoved(c, "tablet " + tabletId + " is not served here; look the row up again");
      return Behaviors.same();
    }).build();
  }

  /**
   * The answer of a tablet that no longer serves: a request is refused as moved, and so is a
   * row-atomic request whose read finished meanwhile (it wrote nothing); a drop that finished
   * meanwhile is answered with what it did.
   */
  static void refuseMoved(Command c, String why) {
    if (c instanceof Request r) {
      r.replyTo().<Object>unsafeUpcast().tell(Refusal.of(ErrorCode.MOVED, why).reply());
    } else if (c instanceof RowDecided d) {
      d.request().replyTo().<Object>unsafeUpcast().tell(Refusal.of(ErrorCode.MOVED, why).reply());
    } else if (c instanceof DropDone d) {
      d.request().replyTo().tell(d.failure() == null ? StatusReply.ack() : refusal(d.failure()));
    } else if (c instanceof TokenChecked t) {
      t.done().accept(new io.tabula.persistence.tablet.TabletUnavailableException(why));
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Mutate.class, this::onMutate)
        .onMessage(MutateBatch.class, this::onMutateBatch)
        .onMessage(ReadRows.class, this::onReadRows)
        .onMessage(CheckAndMutate.class, this::onCheckAndMutate)
        .onMessage(ReadModifyWrite.class, this::onReadModifyWrite)
        .onMessage(ReadRow.class, this::onReadRow)
        .onMessage(OpenScan.class, this::onOpenScan)
        .onMessage(SampleRows.class, this::onSampleRows)
        .onMessage(ReadChanges.class, r -> TabletChangeReads.read(tablet, r, blockingIo, this))
        .onMessage(DropRows.class, this::onDropRows)
        .onMessage(Retire.class, this::onRetire)
        .onMessage(PrepareMove.class, this::onPrepareMove)
        .onMessage(ListForBackup.class, this::onListForBackup)
        .onMessage(CloseForMerge.class, this::onCloseForMerge)
        .onMessage(MergeInto.class, this::onMergeInto)
        .onMessageEquals(HandOff.INSTANCE, this::onHandOff)
        .onMessageEquals(Wake.INSTANCE, () -> this)
        .onMessage(WriteFinished.class, w -> {
          writes.writeFinished(w);
          return this;
        })
        .onMessage(RowDecided.class, d -> same(() -> writes.decided(d)))
        .onMessage(TokenChecked.class, t -> same(() -> writes.tokenChecked(t)))
        .onMessage(DropDone.class, d -> same(() -> writes.dropped(d)))
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .onMessageEquals(RetryHeldWrites.INSTANCE, () -> same(writes::retryHeld))
        .onMessage(SplitDone.class, this::onSplitDone)
        .onMessage(SplitHot.class, h -> same(() -> splits.startHot(reads.load())))
        // Out of LocalTablets when stopped, and before a restart opens the tablet again.
        .onSignal(PostStop.class, stop -> same(() -> node.local().stop(info.id(), reads)))
        .onSignal(PreRestart.class, r -> same(() -> node.local().stop(info.id(), reads)))
        .build();
  }

  /** Runs {@code step} and stays as this behaviour. */
  private Behavior<Command> same(Runnable step) {
    step.run();
    return this;
  }

  private Behavior<Command> onMutate(Mutate m) {
    ticks.busy();
    writes.write(m.mutation(), m.replyTo(), Done.getInstance());
    return this;
  }

  private Behavior<Command> onMutateBatch(MutateBatch b) {
    ticks.busy();
    writes.writeBatch(b);
    return this;
  }

  private Behavior<Command> onCheckAndMutate(CheckAndMutate c) {
    ticks.busy();
    writes.checkAndMutate(c);
    return this;
  }

  private Behavior<Command> onReadModifyWrite(ReadModifyWrite c) {
    ticks.busy();
    writes.readModifyWrite(c);
    return this;
  }

  private Behavior<Command> onDropRows(DropRows d) {
    ticks.busy();
    writes.dropRows(d);
    return this;
  }

  private Behavior<Command> onRetire(Retire r) {
    node.local().stop(info.id(), reads);
    timers.cancelAll();
    getContext().pipeToSelf(CompletableFuture.runAsync(tablet::closeWithoutFlush, blockingIo),
        (ok, err) -> new Retired(r, err));
    String why = "table " + info.table() + " was deleted";
    return Behaviors.receive(Command.class)
        .onMessage(Retired.class, done -> {
          // Whatever waited meets the closed tablet now and is refused.
          writes.closed();
          done.request().replyTo().tell(done.failure() == null ? StatusReply.ack() : refusal(done.failure()));
          return gone(info.id());
        })
        .onMessage(WriteFinished.class, w -> Behaviors.same())
        .onMessageEquals(RetryHeldWrites.INSTANCE, Behaviors::same)
        .onMessageEquals(Tick.INSTANCE, Behaviors::same)
        .onAnyMessage(c -> {
          refuseMoved(c, why);
          return Behaviors.same();
        }).build();
  }

  private Behavior<Command> onPrepareMove(PrepareMove p) {
    CompletableFuture.runAsync(() -> tablet.freezeAndFlush().join(), blockingIo).whenComplete((ok, err) ->
        p.replyTo().tell(err == null ? StatusReply.ack() : refusal(err)));
    return this;
  }

  private Behavior<Command> onListForBackup(ListForBackup l) {
    io.tabula.persistence.tablet.TabletBackups.list(tablet).whenComplete((files, err) -> l.replyTo().tell(err == null ? StatusReply.success(files)
        : refusal(err)));
    return this;
  }

  /**
   * The hand-over of a move (paper §5.2): reads leave the node's local list at once (they go
   * through sharding, which holds them for the new owner); what is in flight finishes; then
   * the tablet is flushed and closed, the master hears that this node's log no longer holds
   * it, and the actor stops. Sharding delivers nothing new to it meanwhile. An idle close
   * ({@link IdleClose}) comes this way too.
   */
  private Behavior<Command> onHandOff() {
    long started = System.nanoTime();
    if (idleClose.asked()) {
      return closeFor("closed, idle", () -> { }, e -> {
        if (e.failure() != null && !e.splitMeanwhile()) {
          getContext().getLog().error("tablet {} could not be flushed as it closed, idle; it opens again and "
              + "replays this node's log", info.id(), e.failure());
        }
      });
    }
    return closeFor("handed over", () -> { }, e -> {
      if (e.splitMeanwhile()) {
        getContext().getLog().info("tablet {} split while it was being handed over; its halves are placed anew",
            info.id());
      } else if (e.failure() != null) {
        getContext().getLog().error("tablet {} could not be flushed for its hand-over; its next owner replays"
            + " this node's log", info.id(), e.failure());
      } else {
        getContext().getLog().info("tablet {} handed over: closed {} ms after the hand-over began", info.id(),
            (System.nanoTime() - started) / 1_000_000);
      }
    });
  }

  /** The first half of a merge: this tablet, the right one, closes cleanly and its actor stops. */
  private Behavior<Command> onCloseForMerge(CloseForMerge c) {
    return closeFor("closed for a merge", () -> { }, e -> c.replyTo().tell(e.failure() == null
        ? StatusReply.ack() : refusal(e.failure())));
  }

  /**
   * The second half of a merge: this tablet, the left one, closes cleanly, then writes the
   * manifest of the merged tablet over both (the right one closed already), answers, and stops.
   */
  private Behavior<Command> onMergeInto(MergeInto m) {
    return closeFor("closed for a merge", () -> node.server().writeMergedManifest(info.table(), info.id(),
        m.rightId(), m.childId()), e -> m.replyTo().tell(e.failure() == null ? StatusReply.ack()
        : refusal(e.failure())));
  }

  /**
   * Stops serving: reads leave the node's local list and periodic work stops, then the actor
   * closes the tablet as {@link TabletClosing} says, running {@code after} once it is closed
   * cleanly and telling {@code done} how it ended.
   */
  private Behavior<Command> closeFor(String what, TabletClosing.AfterClose after,
      java.util.function.Consumer<TabletClosing.Ended> done) {
    node.local().stop(info.id(), reads);
    timers.cancelAll();
    // Writes held for the flush backlog must still be tried (or refused, once the tablet is
    // closed or the engine abandoned): cancelling their timer left a hand-over waiting on them
    // until its phase timed out (about 10 s when a node stopped on a failed fsync).
    writes.retryHeld();
    return new TabletClosing(getContext(), node, info, opening, writes, splits, blockingIo, what, after, done)
        .behavior();
  }

  private Behavior<Command> onReadRow(ReadRow r) {
    readOffThread(r.filter(), r.replyTo(), filter -> new RowResult(reads.row(r.row(), filter)));
    return this;
  }

  private Behavior<Command> onReadRows(ReadRows r) {
    readOffThread(r.filter(), r.replyTo(), filter -> new RowsResult(reads.rows(r.rows(), filter)));
    return this;
  }

  private <T> void readOffThread(byte[] filterBytes, ActorRef<StatusReply<T>> replyTo,
      java.util.function.Function<CompiledFilter, T> read) {
    reads.offThread(filterBytes, replyTo, read, blockingIo);
  }

  private Behavior<Command> onOpenScan(OpenScan s) {
    reads.openScan(s, getContext().getSystem());
    return this;
  }

  private Behavior<Command> onSampleRows(SampleRows s) {
    try {
      s.replyTo().tell(StatusReply.success(new ArrayList<>(tablet.rowSamples())));
    } catch (RuntimeException e) {
      s.replyTo().tell(refusal(e));
    }
    return this;
  }

  private Behavior<Command> onTick() {
    if (splits.running()) {
      return this;
    }
    try {
      tick();
    } catch (TabletUnavailableException closed) {
      // Closed under this actor (the node is stopping): nothing to report or split; requests meet the closed
      // tablet and are refused as moved.
      timers.cancel(Tick.INSTANCE);
    }
    return this;
  }

  private void tick() {
    Tablet.Sizes sizes = tablet.sizes();
    Map<String, List<String>> files = reports.report(reads.load(), sizes.total());
    ticks.checked(reports.quiet(), sizes.memtableBytes() == 0);
    if (idleClose.afterCheck(reports.quiet())) {
      return; // asked to stop: no split nor compaction starts that the close would wait for
    }
    if (splits.due(sizes.total())) {
      splits.start();
      return;
    }
    QuietCompaction.Action action = quiet.atTick(files, sizes.memtableBytes(), sizes.fileBytes());
    CompletableFuture<Void> done = QuietCompaction.run(action, tablet, blockingIo);
    if (done != null) {
      done.whenComplete((ok, err) -> {
        Throwable cause = err instanceof CompletionException ? err.getCause() : err;
        // A tablet closed meanwhile (moved, split, the node stopping) has nothing left to flush or compact.
        if (cause != null && !(cause instanceof TabletUnavailableException)) {
          node.server().env().failures().report("quiet " + action + " of tablet " + info.id(), cause);
        }
      });
    }
  }

  private Behavior<Command> onSplitDone(SplitDone d) {
    if (!splits.finished(d)) {
      return this;
    }
    node.local().stop(info.id(), reads);
    // Held and waiting writes and requests meet the closed tablet and are answered "moved", to be retried at the
    // children.
    writes.closed();
    splits.record(d);
    return awaitingRecord(d, false);
  }

  /**
   * After the engine split: refuse every request as moved until the master has recorded
   * the split, then stay refusing. A refused or unanswered record is asked again at the
   * next tick, not at once.
   */
  private Behavior<Command> awaitingRecord(SplitDone d, boolean askAtTick) {
    return Behaviors.receive(Command.class)
        .onMessage(SplitRecorded.class, r -> {
          if (!r.ok()) {
            return awaitingRecord(d, true);
          }
          splits.recorded();
          return gone(info.id());
        })
        .onMessage(WriteFinished.class, w -> Behaviors.same())
        .onMessageEquals(Tick.INSTANCE, () -> {
          if (!askAtTick) {
            return Behaviors.same();
          }
          splits.record(d);
          return awaitingRecord(d, false);
        })
        .onAnyMessage(c -> {
          refuseMoved(c, "tablet " + info.id() + " has split; look the row up again");
          return Behaviors.same();
        }).build();
  }

  /** The error reply for an engine or filter failure (see {@link Refusals}). */
  static <T> StatusReply<T> refusal(Throwable t) {
    return Refusals.of(t).reply();
  }
}
