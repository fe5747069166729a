package io.tabula.actors.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Orders a tablet's work on its rows so that every read-then-write is atomic per row (paper
 * §2: every read or write under one row key is atomic). Three kinds of work pass through it:
 *
 * <ul>
 *   <li>a <b>write</b> of one row ({@link #write}): runs beside earlier writes to the row that
 *       are still in flight (the engine orders those by sequence number), and counts as in
 *       flight until {@link #writeFinished};
 *   <li>an <b>exclusive</b> request on one row ({@link #exclusive}: check-and-mutate,
 *       read-modify-write): reads the row, then may write it. It starts once nothing is in
 *       flight on the row, and holds the row until it answers without writing
 *       ({@link #exclusiveDone}) or its write is applied ({@link #exclusiveWrote}, after which
 *       that write is in flight like any other);
 *   <li>a <b>range hold</b> ({@link #holdRange}: dropping a row range): starts once nothing is
 *       in flight on any row of the range, and holds every row of it until {@link #release}.
 * </ul>
 *
 * <p>Invariants:
 * <ol>
 *   <li>Per row, work starts in arrival order: nothing overtakes work queued on its row.
 *   <li>An exclusive request starts only when its row has no write in flight, no other
 *       exclusive request and no range hold (started or waiting) over it; so no write to the
 *       row can come between its read and its write.
 *   <li>A write starts only when its row has no exclusive request, no range hold over it and
 *       nothing queued ahead of it.
 *   <li>A range hold's work starts only when no row of its range has a write in flight or an
 *       exclusive request; from its arrival on, work on its rows waits behind it.
 * </ol>
 *
 * <p>Work is a {@link Runnable} run on the calling thread; it may call back into the gate (a
 * write that fails at once reports {@link #writeFinished} from inside its run): such calls are
 * recorded and acted on once the current step is done, never recursively. Not thread-safe:
 * owned by the tablet actor, every call from its mailbox.
 */
final class RowGate {
  /** One row with work in flight or waiting. */
  private static final class RowState {
    int writes;
    boolean exclusive;
    final ArrayDeque<Pending> queue = new ArrayDeque<>();

    boolean idle() {
      return writes == 0 && !exclusive && queue.isEmpty();
    }
  }

  private record Pending(boolean exclusive, Runnable work) {}

  /** A range of rows [start, end) held by a request (an empty end is unbounded). */
  static final class RangeHold {
    private final byte[] start;
    private final byte[] end;
    private final Consumer<RangeHold> work;
    private boolean started;

    private RangeHold(byte[] start, byte[] end, Consumer<RangeHold> work) {
      this.start = start;
      this.end = end;
      this.work = work;
    }

    boolean covers(byte[] row) {
      return ByteArrays.compare(row, start) >= 0 && (end.length == 0 || ByteArrays.compare(row, end) < 0);
    }
  }

  private final Map<RowKey, RowState> rows = new HashMap<>();
  /** Range holds in arrival order, started or waiting. */
  private final List<RangeHold> holds = new ArrayList<>();
  /** Rows whose queue may be able to move, to look at once the current step is done. */
  private final ArrayDeque<RowKey> toDrain = new ArrayDeque<>();
  private boolean holdsToCheck;
  private boolean pumping;

  /** Runs {@code apply} (a write of {@code row}) now, or once it may (invariant 3). */
  void write(byte[] row, Runnable apply) {
    RowKey k = new RowKey(row);
    RowState s = rows.computeIfAbsent(k, x -> new RowState());
    if (!s.queue.isEmpty() || s.exclusive || held(row)) {
      s.queue.add(new Pending(false, apply));
      return;
    }
    s.writes++;
    apply.run();
  }

  /** Runs {@code start} (an exclusive request on {@code row}) now, or once it may (invariant 2). */
  void exclusive(byte[] row, Runnable start) {
    RowKey k = new RowKey(row);
    RowState s = rows.computeIfAbsent(k, x -> new RowState());
    s.queue.add(new Pending(true, start));
    toDrain.add(k);
    pump();
  }

  /** A write to {@code row} is durable or failed. */
  void writeFinished(byte[] row) {
    RowKey k = new RowKey(row);
    RowState s = rows.get(k);
    if (s == null || s.writes == 0) {
      return;
    }
    s.writes--;
    changed(k);
  }

  /** The exclusive request on {@code row} answered without writing. */
  void exclusiveDone(byte[] row) {
    releaseExclusive(row, false);
  }

  /** The exclusive request on {@code row} applied its write: the row has that write in flight instead. */
  void exclusiveWrote(byte[] row) {
    releaseExclusive(row, true);
  }

  private void releaseExclusive(byte[] row, boolean wrote) {
    RowKey k = new RowKey(row);
    RowState s = rows.get(k);
    if (s == null || !s.exclusive) {
      return;
    }
    s.exclusive = false;
    if (wrote) {
      s.writes++;
    }
    changed(k);
  }

  /**
   * Holds the rows of [{@code start}, {@code end}) and runs {@code work}, given the hold, once
   * nothing is in flight on them (invariant 4); the rows stay held until {@link #release} of it.
   */
  void holdRange(byte[] start, byte[] end, Consumer<RangeHold> work) {
    RangeHold h = new RangeHold(start, end, work);
    holds.add(h);
    holdsToCheck = true;
    pump();
  }

  /** Ends a range hold: the work waiting on its rows may go on. */
  void release(RangeHold h) {
    if (!holds.remove(h)) {
      return;
    }
    for (Map.Entry<RowKey, RowState> e : rows.entrySet()) {
      if (!e.getValue().queue.isEmpty() && h.covers(e.getKey().bytes())) {
        toDrain.add(e.getKey());
      }
    }
    holdsToCheck = true;
    pump();
  }

  /**
   * Takes out all waiting work (queued on rows, and range holds not started), forgetting every
   * row's state: for a tablet that has closed, whose waiting requests must now be run to meet
   * the closed tablet and be refused. In arrival order per row.
   */
  List<Runnable> takeAllWaiting() {
    List<Runnable> out = new ArrayList<>();
    for (RowState s : rows.values()) {
      s.queue.forEach(p -> out.add(p.work()));
    }
    for (RangeHold h : holds) {
      if (!h.started) {
        out.add(() -> h.work.accept(h));
      }
    }
    rows.clear();
    holds.clear();
    toDrain.clear();
    return out;
  }

  /** Whether nothing is in flight or waiting. */
  boolean isEmpty() {
    return rows.isEmpty() && holds.isEmpty();
  }

  private void changed(RowKey k) {
    toDrain.add(k);
    if (!holds.isEmpty()) {
      holdsToCheck = true;
    }
    pump();
  }

  /** Starts whatever may start, until nothing more can; re-entrant calls only leave work for the loop. */
  private void pump() {
    if (pumping) {
      return;
    }
    pumping = true;
    try {
      while (!toDrain.isEmpty() || holdsToCheck) {
        if (!toDrain.isEmpty()) {
          drain(toDrain.poll());
        } else {
          holdsToCheck = false;
          startQuietHolds();
        }
      }
    } finally {
      pumping = false;
    }
  }

  /** Starts the work queued on one row that may start now, in order; forgets the row once idle. */
  private void drain(RowKey k) {
    RowState s = rows.get(k);
    if (s == null) {
      return;
    }
    while (!s.queue.isEmpty() && !s.exclusive && !held(k.bytes())) {
      Pending next = s.queue.peek();
      if (next.exclusive()) {
        if (s.writes > 0) {
          break;
        }
        s.queue.poll();
        s.exclusive = true;
      } else {
        s.queue.poll();
        s.writes++;
      }
      next.work().run();
    }
    if (s.idle() && rows.get(k) == s) {
      rows.remove(k);
    }
  }

  private void startQuietHolds() {
    for (RangeHold h : new ArrayList<>(holds)) {
      if (!h.started && quiet(h)) {
        h.started = true;
        h.work.accept(h);
      }
    }
  }

  /** Whether no row of {@code h}'s range has a write or an exclusive request in flight. */
  private boolean quiet(RangeHold h) {
    for (Iterator<Map.Entry<RowKey, RowState>> it = rows.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<RowKey, RowState> e = it.next();
      RowState s = e.getValue();
      if ((s.writes > 0 || s.exclusive) && h.covers(e.getKey().bytes())) {
        return false;
      }
    }
    return true;
  }

  /** Whether a range hold, started or waiting, covers {@code row}. */
  private boolean held(byte[] row) {
    for (RangeHold h : holds) {
      if (h.covers(row)) {
        return true;
      }
    }
    return false;
  }
}
