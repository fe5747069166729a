package io.tabula.persistence.wal;

/**
 * Group commit's waits on the log's writer thread: a short spin for the next record before the
 * writer sleeps, and a linger while records keep arriving so that one fsync covers them too.
 * Both are spins: the records they wait for come within microseconds or not soon, and a
 * sleeping thread would wake too late to be worth it.
 *
 * <p>The count of records queued is set under the log's queue lock and read here without it;
 * the recent fsync time is the writer thread's.
 */
final class GroupCommitWaits {
  private static final long QUIET_NANOS = 15_000;
  private static final long MAX_LINGER_NANOS = 500_000;
  private static final long SPIN_NANOS = 50_000;
  /** Records queued, readable without the lock. */
  private volatile int queued;
  /** Recent fsync time, a moving average. Owned by the writer thread. */
  private long fsyncNanos;

  /** The log's queue now holds {@code n} records (called under its lock). */
  void queued(int n) {
    queued = n;
  }

  /** An fsync took {@code nanos}. */
  void synced(long nanos) {
    fsyncNanos += (nanos - fsyncNanos) / 8;
  }

  /**
   * Spins a few microseconds for the next record before the writer goes to sleep: waking a
   * sleeping thread costs more than the wait, and right after a group's futures complete
   * their writers usually send the next records at once.
   */
  void awaitBriefly() {
    long until = System.nanoTime() + SPIN_NANOS;
    while (queued == 0 && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  /**
   * While records keep arriving, waits for them a little (at most half the recent fsync time):
   * it ends as soon as no record has come for {@link #QUIET_NANOS}, which is when every writer
   * is waiting for an answer. Fewer, fuller fsyncs.
   */
  void lingerForMore() {
    long now = System.nanoTime();
    long deadline = now + Math.min(fsyncNanos / 2, MAX_LINGER_NANOS);
    long lastArrival = now;
    int seen = queued;
    while (now < deadline && now - lastArrival < QUIET_NANOS) {
      Thread.onSpinWait();
      now = System.nanoTime();
      int q = queued;
      if (q != seen) {
        seen = q;
        lastArrival = now;
      }
    }
  }
}
