package io.tabula.actors.tablet;

import io.tabula.actors.Refusals;
import io.tabula.actors.tablet.TabletActor.CheckAndMutate;
import io.tabula.actors.tablet.TabletActor.Command;
import io.tabula.actors.tablet.TabletActor.DropDone;
import io.tabula.actors.tablet.TabletActor.DropRows;
import io.tabula.actors.tablet.TabletActor.MutateBatch;
import io.tabula.actors.tablet.TabletActor.ReadModifyWrite;
import io.tabula.actors.tablet.TabletActor.RowDecided;
import io.tabula.actors.tablet.TabletActor.TokenChecked;
import io.tabula.actors.tablet.TabletActor.WriteFinished;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.encoding.MutationCodec;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletTokens;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.CompiledFilter;
import io.tabula.streams.filter.FilterTooSlowException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.pattern.StatusReply;

/**
 * The write side of a tablet actor: writes, batches, check-and-mutate, read-modify-write
 * and row-range drops, ordered per row by a {@link RowGate} and never blocking the actor.
 *
 * <ul>
 *   <li>A write goes to the engine at once ({@link Tablet#tryApply}) and is answered from the
 *       commit log's completion (group commit), never before it is durable. While the
 *       tablet's flush backlog is full the engine refuses to take it rather than block, and
 *       the write is held here, in order, and tried again every {@value #HELD_RETRY_MILLIS} ms.
 *   <li>Check-and-mutate and read-modify-write are exclusive on their row: they start once
 *       no earlier write to the row is in flight, read the row (and evaluate the predicate, or
 *       compute the new cells) on the blocking-I/O dispatcher, and write on the actor when
 *       the answer comes back; no write to the row can come between the read and the write.
 *   <li>A row-range drop holds its rows: it starts once nothing is in flight on them, deletes
 *       them on the blocking-I/O dispatcher, and requests on them wait until it has finished.
 * </ul>
 *
 * <p>Not thread-safe: owned by the tablet actor, every method called from its mailbox;
 * completions come back as messages ({@link WriteFinished}, {@link RowDecided},
 * {@link DropDone}).
 */
final class TabletWrites {
  static final long HELD_RETRY_MILLIS = 10;

  /** A write the engine could not take yet (flush backlog full), with what to do once it is durable. */
  private record Held(RowMutation mutation, long serverTime, boolean finish, Consumer<Throwable> done) {}

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final Tablet tablet;
  private final TabletReads reads;
  private final Executor blockingIo;
  private final QuietCompaction quiet;
  private final RowGate rows = new RowGate();
  private final ArrayDeque<Held> held = new ArrayDeque<>();

  TabletWrites(ActorContext<Command> ctx, TimerScheduler<Command> timers, Tablet tablet, TabletReads reads,
      Executor blockingIo, QuietCompaction quiet) {
    this.ctx = ctx;
    this.timers = timers;
    this.tablet = tablet;
    this.reads = reads;
    this.blockingIo = blockingIo;
    this.quiet = quiet;
  }

  // ---- plain writes

  /** Applies {@code rm} and answers {@code result} once it is durable. */
  <T> void write(RowMutation rm, ActorRef<StatusReply<T>> replyTo, T result) {
    Consumer<Throwable> done = err -> replyTo.tell(err == null ? StatusReply.success(result) : Refusals.of(err).reply());
    if (TabletTokens.of(rm) != null) {
      idempotent(rm, done);
      return;
    }
    rows.write(rm.row(), () -> apply(rm, true, done));
  }

  /**
   * A write that carries an idempotency token ({@link TabletTokens}): exclusive on its row,
   * like a check-and-mutate, it looks for its token on the blocking-I/O dispatcher, and is
   * applied only if the row does not hold it; {@code done} learns the outcome either way (a
   * retry of an applied write succeeds without applying it again).
   */
  private void idempotent(RowMutation rm, Consumer<Throwable> done) {
    rows.exclusive(rm.row(), () -> {
      CompletableFuture<Boolean> seen = CompletableFuture.supplyAsync(() -> {
        try {
          boolean found = TabletTokens.seen(tablet, rm.row(), TabletTokens.of(rm));
          tablet.checkNotFenced();
          return found;
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }, blockingIo);
      ctx.pipeToSelf(seen, (found, err) -> new TokenChecked(rm, Boolean.TRUE.equals(found), err, done));
    });
  }

  void tokenChecked(TokenChecked t) {
    byte[] row = t.mutation().row();
    if (t.failure() != null || t.seen()) {
      rows.exclusiveDone(row);
      t.done().accept(t.failure());
    } else {
      rows.exclusiveWrote(row);
      apply(t.mutation(), true, t.done());
    }
  }

  /**
   * Applies each row mutation on its own and replies, once every one is durable or refused,
   * with one outcome per row; the rows leave the in-flight count together, in one message.
   */
  void writeBatch(MutateBatch b) {
    int n = b.mutations().size();
    if (n == 0) {
      b.replyTo().tell(StatusReply.success(new TabletActor.BatchOutcome(List.of())));
      return;
    }
    Refusal[] refusals = new Refusal[n];
    AtomicInteger left = new AtomicInteger(n);
    List<byte[]> written = new ArrayList<>(n);
    ActorRef<Command> self = ctx.getSelf();
    for (int i = 0; i < n; i++) {
      int at = i;
      RowMutation rm = b.mutations().get(i);
      boolean token = TabletTokens.of(rm) != null;
      if (!token) {
        written.add(rm.row()); // an idempotent write's row leaves the in-flight count on its own
      }
      Consumer<Throwable> done = err -> {
        if (err != null) {
          refusals[at] = Refusals.of(err);
        }
        // The last decrement happens after every other write of refusals: it sees them all.
        if (left.decrementAndGet() == 0) {
          b.replyTo().tell(StatusReply.success(new TabletActor.BatchOutcome(new ArrayList<>(Arrays.asList(refusals)))));
          self.tell(new WriteFinished(written));
        }
      };
      if (token) {
        idempotent(rm, done);
      } else {
        rows.write(rm.row(), () -> apply(rm, false, done));
      }
    }
  }

  /**
   * Hands {@code rm} to the engine, or holds it while the flush backlog is full (or older
   * writes are held), and calls {@code done} (null, or the failure) once it is durable, on
   * whichever thread completes it. With {@code finish} the row leaves the in-flight count
   * through its own {@link WriteFinished}; without, the caller sends one.
   */
  private void apply(RowMutation rm, boolean finish, Consumer<Throwable> done) {
    apply(rm, MutationCodec.Logged.NO_SERVER_TIME, finish, done);
  }

  /** {@link #apply(RowMutation, boolean, Consumer)} of cells stamped from {@code serverTime} ({@link Tablet#nextServerTime}). */
  private void apply(RowMutation rm, long serverTime, boolean finish, Consumer<Throwable> done) {
    quiet.wrote();
    TabletLoad load = reads.load();
    Consumer<Throwable> counted = err -> {
      if (err == null) {
        load.written(rm);
      }
      done.accept(err);
    };
    if (!held.isEmpty() || !tryApply(rm, serverTime, finish, counted)) {
      held.add(new Held(rm, serverTime, finish, counted));
      timers.startSingleTimer(TabletActor.RetryHeldWrites.INSTANCE, Duration.ofMillis(HELD_RETRY_MILLIS));
    }
  }

  /** Whether the engine took the write (or refused it for good, which {@code done} hears of). */
  private boolean tryApply(RowMutation rm, long serverTime, boolean finish, Consumer<Throwable> done) {
    CompletableFuture<Void> f;
    try {
      f = serverTime == MutationCodec.Logged.NO_SERVER_TIME ? tablet.tryApply(rm) : tablet.tryApply(rm, serverTime);
    } catch (RuntimeException e) {
      done.accept(e);
      if (finish) {
        rows.writeFinished(rm.row());
      }
      return true;
    }
    if (f == null) {
      return false;
    }
    ActorRef<Command> self = ctx.getSelf();
    f.whenComplete((ok, err) -> {
      done.accept(err);
      if (finish) {
        self.tell(new WriteFinished(List.of(rm.row())));
      }
    });
    return true;
  }

  /** Applies held writes, oldest first, while the engine takes them. */
  void retryHeld() {
    while (!held.isEmpty()) {
      Held h = held.peek();
      if (!tryApply(h.mutation(), h.serverTime(), h.finish(), h.done())) {
        timers.startSingleTimer(TabletActor.RetryHeldWrites.INSTANCE, Duration.ofMillis(HELD_RETRY_MILLIS));
        return;
      }
      held.poll();
    }
  }

  void writeFinished(WriteFinished w) {
    for (byte[] r : w.rows()) {
      rows.writeFinished(r);
    }
  }

  // ---- row-atomic requests

  void checkAndMutate(CheckAndMutate c) {
    rows.exclusive(c.row(), () -> {
      CompiledFilter predicate;
      try {
        predicate = reads.compile(c.predicate());
      } catch (RuntimeException e) {
        answerWithoutWrite(c.row(), c.replyTo(), Refusals.of(e).reply());
        return;
      }
      decideOffThread(c, () -> {
        Optional<Row> row = read(c.row());
        boolean matched;
        try {
          matched = row.isPresent() && !predicate.apply(row.get()).cells().isEmpty();
        } catch (FilterTooSlowException e) {
          throw e.sentAs("predicate_filter");
        }
        List<Mutation> ms = matched ? c.onMatch() : c.onNoMatch();
        return new Decision(ms.isEmpty() ? null : new RowMutation(c.row(), ms), matched,
            MutationCodec.Logged.NO_SERVER_TIME);
      });
    });
  }

  void readModifyWrite(ReadModifyWrite c) {
    rows.exclusive(c.row(), () -> decideOffThread(c, () -> {
      for (int i = 0; i < c.rules().size(); i++) {
        String family = c.rules().get(i).family();
        if (tablet.schema().aggregator(family) != null) {
          throw new io.tabula.persistence.model.InvalidMutationException("rules[" + i + "].family_name",
              "names aggregate family '" + family + "', whose cells are written with AddToCell or MergeToCell");
        }
      }
      Optional<Row> row = read(c.row());
      // A server time like a write's (never below one handed out before, also on an earlier node),
      // and recorded as taken, so a later write's server time is never below these cells'.
      long now = tablet.nextServerTime();
      List<Cell> cells = RowUpdates.apply(row.orElse(null), c.rules(), now);
      // Checked like any write: a qualifier or an appended value over its limit is refused here.
      return new Decision(new RowMutation(c.row(), RowUpdates.asMutations(cells)), new Row(c.row(), cells), now);
    }));
  }

  /** What a row-atomic request decided from the row: the write to make (or none) and the answer once it is durable. */
  record Decision(RowMutation write, Object answer, long serverTime) {}

  /** A decision computed off the actor. */
  interface Decide {
    Decision decide() throws IOException;
  }

  /** Reads the row and decides on the blocking-I/O dispatcher; the outcome comes back as {@link RowDecided}. */
  private void decideOffThread(TabletActor.Request request, Decide decide) {
    CompletableFuture<Decision> f = CompletableFuture.supplyAsync(() -> {
      try {
        return decide.decide();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, blockingIo);
    ctx.pipeToSelf(f, (decision, err) -> new RowDecided(request, decision, err));
  }

  /**
   * The row a check-and-mutate or read-modify-write decides on, read only while the tablet is
   * still served here: a check-and-mutate that applies nothing answers from this read alone
   * (docs/fencing.md).
   */
  private Optional<Row> read(byte[] row) throws IOException {
    Optional<Row> r = tablet.read(row, ReadFilter.all());
    tablet.checkNotFenced();
    return r;
  }

  @SuppressWarnings("unchecked")
  void decided(RowDecided d) {
    byte[] row = d.request() instanceof CheckAndMutate c ? c.row() : ((ReadModifyWrite) d.request()).row();
    ActorRef<StatusReply<Object>> replyTo = (ActorRef<StatusReply<Object>>) (ActorRef<?>) d.request().replyTo();
    if (d.failure() != null) {
      answerWithoutWrite(row, replyTo, Refusals.of(d.failure()).reply());
    } else if (d.decision().write() == null) {
      answerWithoutWrite(row, replyTo, StatusReply.success(d.decision().answer()));
    } else {
      rows.exclusiveWrote(row);
      Object answer = d.decision().answer();
      apply(d.decision().write(), d.decision().serverTime(), true, err -> replyTo.tell(err == null
          ? StatusReply.success(answer) : Refusals.of(err).reply()));
    }
  }

  private <T> void answerWithoutWrite(byte[] row, ActorRef<StatusReply<T>> replyTo, StatusReply<T> answer) {
    replyTo.tell(answer);
    rows.exclusiveDone(row);
  }

  // ---- row-range drops

  /** Deletes every row starting with the prefix once nothing is in flight on them; requests on them wait meanwhile. */
  void dropRows(DropRows d) {
    byte[] end = d.prefix().length == 0 ? new byte[0] : ByteArrays.prefixEnd(d.prefix());
    rows.holdRange(d.prefix(), end, hold -> ctx.pipeToSelf(
        CompletableFuture.runAsync(() -> deleteRows(d.prefix(), end), blockingIo),
        (ok, err) -> new DropDone(d, hold, err)));
  }

  private void deleteRows(byte[] start, byte[] end) {
    List<CompletableFuture<Void>> deletes = new ArrayList<>();
    try (var scanner = tablet.scan(start, end, ReadFilter.all())) {
      for (Row r = scanner.next(); r != null; r = scanner.next()) {
        deletes.add(tablet.apply(RowMutation.of(r.key(), Mutation.DeleteFromRow.INSTANCE)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new)).join();
  }

  void dropped(DropDone d) {
    rows.release(d.hold());
    d.request().replyTo().tell(d.failure() == null ? StatusReply.ack() : Refusals.of(d.failure()).reply());
  }

  // ---- closing

  /** Whether nothing is in flight, waiting in the row gate or held for the flush backlog. */
  boolean idle() {
    return rows.isEmpty() && held.isEmpty();
  }

  /**
   * The tablet has closed (split): every write held for the flush backlog and every request
   * waiting in the row gate meets the closed tablet now and is refused as moved.
   */
  void closed() {
    retryHeld();
    rows.takeAllWaiting().forEach(Runnable::run);
    retryHeld();
  }
}
