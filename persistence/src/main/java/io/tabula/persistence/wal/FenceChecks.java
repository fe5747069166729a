package io.tabula.persistence.wal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;

/**
 * Looks for a fence on behalf of many readers at once. Each read must see a look at the
 * fence that <em>began after</em> its snapshot (docs/fencing.md), and on HDFS a look is a
 * namenode call, so one per read would cost every read a round trip and load the namenode
 * with the node's read rate. Instead, as group commit does for writes: at most one look is
 * in flight; callers that arrive meanwhile wait for the next one, which begins when the
 * current one ends, so it began after each of them arrived, and they all share its answer.
 * A reader waits at most two looks; the number of looks is bounded by their latency, not by
 * the read rate. No clock is involved.
 *
 * <p>Thread-safe. Callers block (reads run on the node's blocking-I/O threads).
 */
final class FenceChecks {
  private final BooleanSupplier look;
  private final Object lock = new Object();
  /** The look running now, or null. */
  @GuardedBy("lock")
  private CompletableFuture<Boolean> running;
  /** The next look, not begun: callers arriving now join it. */
  @GuardedBy("lock")
  private CompletableFuture<Boolean> next;

  /** {@code look} asks the storage; it may throw an unchecked exception, which its waiters get. */
  FenceChecks(BooleanSupplier look) {
    this.look = look;
  }

  /** Whether a look that began after this call found the fence. */
  boolean fenced() {
    CompletableFuture<Boolean> mine;
    CompletableFuture<Boolean> before;
    boolean leader;
    synchronized (lock) {
      if (next == null) {
        next = new CompletableFuture<>();
        leader = true;
      } else {
        leader = false;
      }
      mine = next;
      before = running;
    }
    if (leader) {
      if (before != null) {
        before.handle((ok, err) -> null).join(); // one look in flight at a time
      }
      synchronized (lock) {
        next = null; // from here on, arrivals form the look after this one
        running = mine;
      }
      try {
        mine.complete(look.getAsBoolean());
      } catch (RuntimeException | Error e) { // the look's failure, or the JVM's: either way its waiters get it
        mine.completeExceptionally(e);
        if (e instanceof Error err) {
          throw err;
        }
      } finally {
        synchronized (lock) {
          if (running == mine) {
            running = null;
          }
        }
      }
    }
    try {
      return mine.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }
}
