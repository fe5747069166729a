package io.tabula.actors.master;

import io.tabula.actors.master.Master.Command;
import io.tabula.actors.master.Master.Event;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.javadsl.Effect;
import org.apache.pekko.persistence.typed.javadsl.EffectFactories;

/**
 * The master's side of a tablet coming to serve somewhere and leaving (paper §5.2): where a
 * tablet without a live owner goes ({@link Master.Place}), a move's start and hand-over
 * ({@link Master.Move}, {@link Master.MovePrepared}), whether a node may open it now and
 * which logs it replays ({@link Master.MayOpen}), and what an open or a close changes in the
 * directory ({@link Master.ReportOpened}, {@link Master.ReportClosed}), and a tablet's own
 * reports of its split and its files ({@link Master.RecordSplit}, {@link Master.RecordFiles}).
 * docs/fencing.md, "Before a tablet opens", gives the rules and why.
 *
 * <p>Owned by the master's thread: every method is called from its command handling.
 */
final class TabletOpenings {
  private final EffectFactories<Event, Directory> effects;
  private final ActorContext<Command> ctx;
  private final Placements placements;
  private final OpenChecks checks;
  private final Consumer<Directory> publish;
  /**
   * Open reports ({@link Master.ReportOpened}) and clean-close reports ({@link Master.ReportClosed},
   * flushed) taken and not yet recorded, oldest first: one queue, so that an open and a close of
   * one tablet are recorded in the order they came.
   */
  private final java.util.ArrayDeque<Command> pending = new java.util.ArrayDeque<>();
  /** The most reports one journal write records. */
  static final int BATCH = 1000;
  /**
   * The latest opening of each tablet whose open report this master took, and whose close it has
   * not: a close report of an older opening on the same log came after a later opening's open
   * report, against the order a node's reports keep (docs/fencing.md, "A close never undoes a
   * later open"), and is neither recorded nor lets its log go. A master that took over knows
   * only the openings reported to it. About 200 bytes per open tablet.
   */
  private final Map<String, Opening> latestOpening = new java.util.HashMap<>();
  /** When {@link #latestOpening} last forgot the tablets the directory no longer has (nanoTime). */
  private long prunedAt = System.nanoTime();

  /** An opening of a tablet: the log its node writes, and its number among that node's. */
  private record Opening(String log, long number) {}

  TabletOpenings(EffectFactories<Event, Directory> effects, ActorContext<Command> ctx, Placements placements,
      OpenChecks checks, Consumer<Directory> publish) {
    this.effects = effects;
    this.ctx = ctx;
    this.placements = placements;
    this.checks = checks;
    this.publish = publish;
  }

  Effect<Event, Directory> onPlace(Directory d, Master.Place c) {
    TabletInfo t = d.tablet(c.tabletId());
    if (t == null) {
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, "tablet " + c.tabletId()
          + " is not known").reply());
    }
    String owner = d.ownerOf(t.id());
    if (placements.isUp(owner)) {
      return effects.reply(c.replyTo(), StatusReply.success(owner));
    }
    if (!placements.mayReplace(owner)) {
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.UNAVAILABLE, "tablet " + t.id() + " waits for its "
          + "owner " + owner + " to be fenced before it is placed elsewhere").reply());
    }
    String node = placements.leastLoaded(d);
    if (node == null) {
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.UNAVAILABLE, "no node is up to serve tablet "
          + t.id()).reply());
    }
    ctx.getLog().info("placing tablet {} (owner was '{}') on {}", t.id(), owner, node);
    return effects.persist(new Master.TabletsAssigned(Map.of(t.id(), node))).thenRun(publish::accept)
        .thenReply(c.replyTo(), s -> StatusReply.success(node));
  }

  /**
   * Starts a move (paper §5.2): a tablet not placed yet is only assigned; one serving starts
   * its source's preparation (a minor compaction), after which {@link #onMovePrepared} hands
   * it over.
   */
  Effect<Event, Directory> onMove(Directory d, Master.Move c) {
    Refusal refused = placements.refuseMove(d, c.tabletId(), c.to());
    if (refused != null) {
      return effects.reply(c.replyTo(), refused.reply());
    }
    TabletPlacement p = d.placementOf(c.tabletId());
    if (p.owner().equals(c.to())) {
      return effects.reply(c.replyTo(), StatusReply.ack());
    }
    if (!p.assigned()) {
      return effects.persist(new Master.TabletsAssigned(Map.of(c.tabletId(), c.to()))).thenRun(publish::accept)
          .thenReply(c.replyTo(), s -> StatusReply.ack());
    }
    return effects.persist(new Master.MoveStarted(c.tabletId(), p.owner(), c.to())).thenRun(s -> {
      publish.accept(s);
      placements.prepare(ctx, c.tabletId(), p.owner(), c.to());
    }).thenReply(c.replyTo(), s -> StatusReply.ack());
  }

  /** The move's source compacted the tablet (or could not): hand it over, or give the move up. */
  Effect<Event, Directory> onMovePrepared(Directory d, Master.MovePrepared c) {
    TabletPlacement p = d.placementOf(c.tabletId());
    if (d.tablet(c.tabletId()) == null || p.state() != TabletPlacement.State.PREPARING || !p.peer().equals(c.to())) {
      return effects.none();
    }
    if (!c.ok() || !placements.isUp(c.to())) {
      placements.moveEnded(c.tabletId(), ctx.getLog(), "given up: the source could not compact it or "
          + c.to() + " is not up");
      return effects.persist(new Master.MoveFinished(c.tabletId())).thenRun(publish::accept);
    }
    return effects.persist(new Master.MoveHandedOver(c.tabletId(), c.to())).thenRun(publish::accept);
  }

  Effect<Event, Directory> onMayOpen(Directory d, Master.MayOpen c) {
    TabletInfo t = d.tablet(c.tabletId());
    if (t == null) {
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, "tablet " + c.tabletId()
          + " is not known").reply());
    }
    Refusal refused = refuseOpen(d, t.id(), c.node());
    if (refused != null) {
      return effects.reply(c.replyTo(), refused.reply());
    }
    if (!placements.holdsLease()) {
      // A master that lost its lease and has not stopped yet lets nothing open: its view may be stale.
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.UNAVAILABLE, "the master lost its lease; ask the "
          + "next one").reply());
    }
    TabletPlacement p = d.placementOf(t.id());
    List<String> blocking = checks.blocking(t.id(), p.logs(), c.log());
    if (!blocking.isEmpty()) {
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.UNAVAILABLE, "tablet " + t.id() + " waits until the "
          + "commit logs " + blocking + " of the nodes that served it before are fenced or released").reply());
    }
    checks.opened(t.id(), c.log());
    return effects.reply(c.replyTo(), StatusReply.success(new Master.OpenPermit(t, p.logs())));
  }

  /**
   * Why tablet {@code id} may not open at {@code node} now (FAILED_PRECONDITION: being merged, or
   * placed on another node), or null.
   */
  private static Refusal refuseOpen(Directory d, String id, String node) {
    TabletPlacement p = d.placementOf(id);
    if (p.state() == TabletPlacement.State.MERGING) {
      return Refusal.of(ErrorCode.FAILED_PRECONDITION, "tablet " + id + " is being merged");
    }
    if (p.assigned() && !p.owner().equals(node)) {
      return Refusal.of(ErrorCode.FAILED_PRECONDITION, "tablet " + id + " is placed on " + p.owner() + ", not on "
          + node);
    }
    return null;
  }

  /**
   * Takes an open report: refused at once if it cannot be recorded, else kept until the next
   * {@link Master.RecordOpenings}, which records it with every other report that came meanwhile
   * (a group commit: the reports of a node opening thousands of tablets cost a few journal
   * writes). Answered once recorded: the tablet serves only once this master's journal took
   * it, which a master whose epoch a newer one fenced cannot do.
   */
  Effect<Event, Directory> onReportOpened(Directory d, Master.ReportOpened c) {
    Refusal refused = refuseReport(d, c);
    if (refused != null) {
      return effects.reply(c.replyTo(), refused.reply());
    }
    // A refused opening serves nothing and sends no close: only those taken count.
    Opening known = latestOpening.get(c.tabletId());
    if (known == null || !known.log().equals(c.log()) || known.number() < c.opening()) {
      latestOpening.put(c.tabletId(), new Opening(c.log(), c.opening()));
    }
    return keep(c);
  }

  private Effect<Event, Directory> keep(Command report) {
    if (pending.isEmpty()) {
      ctx.getSelf().tell(Master.RecordOpenings.INSTANCE);
    }
    pending.add(report);
    return effects.none();
  }

  /** Why open report {@code c} cannot be recorded against {@code d}, or null. */
  private Refusal refuseReport(Directory d, Master.ReportOpened c) {
    if (d.tablet(c.tabletId()) == null) {
      return Refusal.of(ErrorCode.NOT_FOUND, "tablet " + c.tabletId() + " is not known");
    }
    Refusal refused = refuseOpen(d, c.tabletId(), c.node());
    if (refused != null) {
      return refused;
    }
    List<String> skipped = new ArrayList<>(d.placementOf(c.tabletId()).logs());
    skipped.remove(c.log());
    skipped.removeAll(c.recovered());
    if (!skipped.isEmpty()) {
      ctx.getLog().warn("node {} opened tablet {} without replaying the commit logs {} its placement names: refused; "
          + "it opens the tablet again", c.node(), c.tabletId(), skipped);
      return Refusal.of(ErrorCode.FAILED_PRECONDITION, "tablet " + c.tabletId()
          + " was opened without replaying the commit logs " + skipped + "; open it again");
    }
    return null;
  }

  /**
   * Records up to {@value #BATCH} of the reports kept, in the order they came, checked again
   * against the directory as it is now (it may have changed since they came) and as the
   * reports before them in the batch change it: opens in {@link Master.TabletsOpened} events,
   * closes in {@link Master.TabletClosed} events, all in one journal write.
   */
  Effect<Event, Directory> onRecordOpenings(Directory d, Master.RecordOpenings c) {
    Batch batch = new Batch(d);
    for (int n = 0; n < BATCH && !pending.isEmpty(); n++) {
      Command report = pending.poll();
      if (report instanceof Master.ReportOpened r) {
        batch.open(r);
      } else {
        batch.close((Master.ReportClosed) report);
      }
    }
    if (!pending.isEmpty()) {
      ctx.getSelf().tell(Master.RecordOpenings.INSTANCE);
    }
    List<Event> events = batch.events();
    if (events.isEmpty()) {
      return effects.none();
    }
    List<ActorRef<StatusReply<Done>>> accepted = batch.accepted;
    return effects.persist(events).thenRun(s -> {
      publish.accept(s);
      accepted.forEach(r -> r.tell(StatusReply.ack()));
    });
  }

  /** The events of one {@link #onRecordOpenings}, made in the order of its reports. */
  private final class Batch {
    /** The directory as the events made so far leave it (brought up to date before a close is checked). */
    private Directory now;
    private final List<Event> events = new ArrayList<>();
    /** Opens not yet in {@link #events}: one {@code TabletsOpened} for consecutive opens. */
    private final List<Master.TabletOpened> opened = new ArrayList<>();
    private final List<Event> finished = new ArrayList<>();
    final List<ActorRef<StatusReply<Done>>> accepted = new ArrayList<>();

    Batch(Directory d) {
      this.now = d;
    }

    void open(Master.ReportOpened r) {
      Refusal refused = refuseReport(now, r);
      if (refused != null) {
        r.replyTo().tell(refused.reply());
        return;
      }
      opened.add(new Master.TabletOpened(r.tabletId(), r.node(), r.log(), r.recovered()));
      TabletPlacement p = now.placementOf(r.tabletId());
      if (p.state() == TabletPlacement.State.MOVING && p.owner().equals(r.node())) {
        finished.add(new Master.MoveFinished(r.tabletId()));
        placements.moveEnded(r.tabletId(), ctx.getLog(), "served at " + r.node());
      }
      checks.opened(r.tabletId(), r.log());
      accepted.add(r.replyTo());
    }

    /** A clean close: recorded if the placement (with the opens before it) still names its log. */
    void close(Master.ReportClosed c) {
      flushOpens(true);
      if (!now.placementOf(c.tabletId()).logs().contains(c.log())) {
        return;
      }
      add(new Master.TabletClosed(c.tabletId(), c.log()), true);
    }

    List<Event> events() {
      flushOpens(false); // nothing is checked after the last
      return events;
    }

    /** Adds the opens gathered (and the moves they finish), applied to {@link #now} if {@code apply}. */
    private void flushOpens(boolean apply) {
      if (!opened.isEmpty()) {
        add(opened.size() == 1 ? opened.get(0) : new Master.TabletsOpened(List.copyOf(opened)), apply);
        opened.clear();
        finished.forEach(e -> add(e, apply));
        finished.clear();
      }
    }

    private void add(Event e, boolean apply) {
      events.add(e);
      if (apply) {
        now = DirectoryEvents.apply(now, e);
      }
    }
  }

  /**
   * A close report releases the log's check at once (its writer no longer holds the tablet, so
   * a next opener need not wait for the log to be fenced: docs/fencing.md). One that flushed is
   * also kept for the next {@link #onRecordOpenings}, which records it (no log of this node holds
   * the tablet any more) with the reports that came meanwhile, in the order they came, in one
   * journal write: when every tablet of a large table goes idle at once, the closes cost a
   * journal write per 1,000. One that did not flush leaves its log named.
   */
  Effect<Event, Directory> onReportClosed(Directory d, Master.ReportClosed c) {
    Opening latest = latestOpening.get(c.tabletId());
    if (latest != null && latest.log().equals(c.log())) {
      if (latest.number() > c.opening()) {
        ctx.getLog().error("tablet {}: the close of its opening {} on log {} came after the open of its later opening "
            + "{}, against the order a node's reports keep: not recorded, and its log stays named", c.tabletId(),
            c.opening(), c.log(), latest.number());
        return effects.none();
      }
      latestOpening.remove(c.tabletId());
    }
    if (d.placementOf(c.tabletId()).logs().contains(c.log())) {
      checks.released(c.tabletId(), c.log());
    }
    return c.flushed() ? keep(c) : effects.none();
  }

  /** At each tick: forgets the checks' records of logs no placement names any more. */
  void onTick(Directory d) {
    checks.retain(d);
    if (System.nanoTime() - prunedAt > java.util.concurrent.TimeUnit.MINUTES.toNanos(1)) {
      prunedAt = System.nanoTime();
      latestOpening.keySet().removeIf(id -> d.tablet(id) == null); // deleted tables' tablets
    }
  }

  /** A split a tablet made, recorded (or answered at once if it is already). */
  Effect<Event, Directory> onRecordSplit(Directory d, Master.RecordSplit c) {
    if (d.tablet(c.table(), c.parentId()) == null) {
      return d.tablet(c.table(), c.leftId()) != null ? effects.reply(c.replyTo(), StatusReply.ack())
          : effects.reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, "tablet " + c.parentId() + " of table "
              + c.table() + " is not known").reply());
    }
    Refusal taken = TabletIds.taken(d, c.parentId(), c.leftId(), c.rightId());
    if (taken != null) {
      return effects.reply(c.replyTo(), taken.reply());
    }
    return effects.persist(new Master.TabletSplit(c.table(), c.parentId(), c.splitRow(), c.leftId(), c.rightId()))
        .thenRun(publish::accept).thenReply(c.replyTo(), s -> StatusReply.ack());
  }

  /** A tablet's files after a flush or compaction, recorded unless they are already. */
  Effect<Event, Directory> onRecordFiles(Directory d, Master.RecordFiles c) {
    TabletInfo t = d.tablet(c.table(), c.tabletId());
    if (t == null || (t.files().equals(c.files()) && t.redoPoint() == c.redoPoint())) {
      return effects.none();
    }
    return effects.persist(new Master.TabletFilesRecorded(c.table(), c.tabletId(), c.files(), c.redoPoint()));
  }
}
