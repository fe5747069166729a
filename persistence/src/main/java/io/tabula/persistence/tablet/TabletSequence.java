package io.tabula.persistence.tablet;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * A tablet's write sequence and visibility, and whether it takes writes: each write gets a
 * run of sequence numbers ({@link #begin}) and is in flight until the commit log answers for
 * it ({@link #finish}); the visible sequence is the highest below which no write is in
 * flight, so a reader never sees a write the log may still refuse, nor a later one before an
 * earlier one.
 *
 * <p>Invariants: (1) the visible sequence only grows; (2) no write begins once the tablet is
 * splitting or closed; (3) a split or a close goes on only when no write is in flight.
 *
 * <p>Its lock ({@link #lock}) is the last in the tablet's lock order (see {@link Tablet}): it
 * is taken while holding any other, and nothing is taken under it. Thread-safe.
 */
final class TabletSequence {
  private enum State { OPEN, SPLITTING, CLOSED }

  private final String tabletId;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private long next;

  @GuardedBy("lock")
  private final TreeSet<Long> inFlight = new TreeSet<>();

  @GuardedBy("lock")
  private State state = State.OPEN;

  /** Written under {@link #lock}; read by any thread. */
  private volatile long visible;

  /**
   * Set while the commit log is replayed into the tablet: the visible sequence then starts at
   * the manifest's last sequence, above records still to be replayed, so it is no redo point.
   */
  private volatile boolean replaying;

  /**
   * While replaying: the highest sequence up to which every record was replayed, from the redo
   * point on, without a gap (a record that starts past it, after a gap, leaves it where it is).
   * Written by the one thread replaying; read by a freeze.
   */
  private volatile long replayedThrough;

  /**
   * The readers waiting for the visible sequence to grow or the tablet to close, each its own
   * future, completed outside the lock (what waits on it runs elsewhere); one that times out
   * takes itself out, so an idle tablet's waiters do not pile up.
   */
  @GuardedBy("lock")
  private final java.util.Set<CompletableFuture<Void>> waiters = new java.util.HashSet<>();

  /** A sequence whose writes up to {@code lastSequence} are all visible. */
  TabletSequence(String tabletId, long lastSequence) {
    this.tabletId = tabletId;
    this.next = lastSequence + 1;
    this.visible = lastSequence;
  }

  /** The highest sequence number whose write (and every earlier one) is visible to reads. */
  long visible() {
    return visible;
  }

  /**
   * Completes once the visible sequence is above {@code sequence} or the tablet has closed (at
   * once if it is so now), or after {@code timeoutMillis}. A change stream's reader that has
   * caught up waits on it. Whatever depends on it must run asynchronously: it completes on the
   * thread that made a write visible.
   */
  CompletableFuture<Void> visibleAfter(long sequence, long timeoutMillis) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    synchronized (lock) {
      if (visible > sequence || state == State.CLOSED) {
        return CompletableFuture.completedFuture(null);
      }
      waiters.add(f);
    }
    f.completeOnTimeout(null, timeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS).whenComplete((x, e) -> {
      synchronized (lock) {
        waiters.remove(f);
      }
    });
    return f;
  }

  /** How many readers wait now (for tests). */
  int waiting() {
    synchronized (lock) {
      return waiters.size();
    }
  }

  /** Takes the waiters if the visible sequence grew past {@code before} or the tablet closed. */
  @GuardedBy("lock")
  private List<CompletableFuture<Void>> wakeIfAdvanced(long before) {
    if (waiters.isEmpty() || (visible <= before && state != State.CLOSED)) {
      return List.of();
    }
    List<CompletableFuture<Void>> out = new ArrayList<>(waiters);
    waiters.clear();
    return out;
  }

  private static void wake(List<CompletableFuture<Void>> waiting) {
    waiting.forEach(f -> f.complete(null));
  }

  /** The replay of the log ended: every record up to the visible sequence is in a memtable now. */
  void replayDone() {
    replaying = false;
  }

  /**
   * The redo point a memtable frozen now completes: the visible sequence (every write up to it
   * is in this memtable or an older one); but while the log is replayed, no further than the
   * records replayed without a gap from the tablet's redo point ({@code redoPoint}): the visible
   * sequence then starts at the manifest's last sequence, above records still to be replayed,
   * and a redo point past one would drop it from the next replay, though it was only in memory.
   * (Not the redo point itself: the next replay would then bring back records already flushed,
   * and a compaction may have folded them into an aggregate cell, which would count them twice.)
   */
  long redoForFreeze(long redoPoint) {
    return replaying ? Math.max(redoPoint, Math.min(visible, replayedThrough)) : visible;
  }

  /** The next sequence number to be given out. */
  long next() {
    synchronized (lock) {
      return next;
    }
  }

  /**
   * The first of {@code count} sequence numbers for a write now in flight.
   *
   * @throws TabletUnavailableException if the tablet is splitting or closed
   */
  long begin(int count) {
    synchronized (lock) {
      requireOpen();
      long base = next;
      next += count;
      inFlight.add(base);
      return base;
    }
  }

  /** The write that began at {@code base} has ended, applied or failed. */
  void finish(long base) {
    List<CompletableFuture<Void>> wake;
    synchronized (lock) {
      long before = visible;
      inFlight.remove(base);
      visible = inFlight.isEmpty() ? next - 1 : inFlight.first() - 1;
      lock.notifyAll();
      wake = wakeIfAdvanced(before);
    }
    wake(wake);
  }

  /**
   * A write of sequences {@code base} to {@code last} was replayed from the log, over a tablet
   * whose redo point is {@code redoPoint}: it is visible unless others are in flight. Until
   * {@link #replayDone}, a memtable frozen moves the redo point only as far as the records
   * replayed without a gap ({@link #redoForFreeze}).
   */
  void replayed(long base, long last, long redoPoint) {
    if (!replaying) {
      replayedThrough = redoPoint;
      replaying = true;
    }
    if (base <= replayedThrough + 1) {
      replayedThrough = Math.max(replayedThrough, last);
    }
    List<CompletableFuture<Void>> wake;
    synchronized (lock) {
      long before = visible;
      next = Math.max(next, last + 1);
      if (inFlight.isEmpty()) {
        visible = next - 1;
      }
      wake = wakeIfAdvanced(before);
    }
    wake(wake);
  }

  /**
   * Waits until every write with a sequence up to {@code sequence} has finished, applied or
   * failed: a frozen memtable is final only then (it may hold writes the log has not
   * answered for yet, and a failed one is taken out again).
   */
  void awaitFinished(long sequence) throws IOException {
    synchronized (lock) {
      while (visible < sequence && !inFlight.isEmpty() && inFlight.first() <= sequence) {
        try {
          lock.wait(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while waiting for writes to finish before a flush", e);
        }
      }
    }
  }

  /**
   * Stops taking writes for a split and waits for those in flight.
   *
   * @throws TabletUnavailableException if the tablet is already splitting or closed
   */
  void startSplit() throws IOException {
    synchronized (lock) {
      requireOpen();
      state = State.SPLITTING;
      awaitNoneInFlight("interrupted while waiting for writes to finish before a split");
    }
  }

  /** Takes writes again after a split that failed (unless the tablet closed meanwhile). */
  void splitFailed() {
    synchronized (lock) {
      if (state == State.SPLITTING) {
        state = State.OPEN;
      }
    }
  }

  /** Whether the tablet has stopped taking writes for good. */
  boolean closed() {
    synchronized (lock) {
      return state == State.CLOSED;
    }
  }

  /** Stops taking writes for good. Whether this call closed it (false: it was closed already). */
  boolean close() {
    List<CompletableFuture<Void>> wake;
    synchronized (lock) {
      if (state == State.CLOSED) {
        return false;
      }
      state = State.CLOSED;
      wake = wakeIfAdvanced(visible);
    }
    wake(wake);
    return true;
  }

  /** {@link #close}, then waits for the writes in flight. */
  boolean closeAndDrain() throws IOException {
    synchronized (lock) {
      if (!close()) {
        return false;
      }
      awaitNoneInFlight("interrupted while closing tablet " + tabletId);
      return true;
    }
  }

  @GuardedBy("lock")
  private void awaitNoneInFlight(String interrupted) throws IOException {
    while (!inFlight.isEmpty()) {
      try {
        lock.wait();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(interrupted, e);
      }
    }
  }

  @GuardedBy("lock")
  private void requireOpen() {
    if (state != State.OPEN) {
      throw new TabletUnavailableException("tablet " + tabletId + " is " + state.name().toLowerCase()
          + (state == State.SPLITTING ? "; retry at the tablet that now holds the row" : ""));
    }
  }
}
