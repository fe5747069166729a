package io.tabula.cluster.security;

import java.util.concurrent.atomic.AtomicLong;

/**
 * At most {@code perSecond} takes a second, with a burst of as many (signature checks of new
 * tokens, audit lines of denials): a token bucket kept as
 * the time the next take is free ({@link System#nanoTime}'s scale). Thread-safe, lock-free.
 */
final class RateBudget {
  private final long intervalNanos;
  private final long burstNanos;
  private final AtomicLong nextFree = new AtomicLong(Long.MIN_VALUE);

  RateBudget(int perSecond) {
    this.intervalNanos = 1_000_000_000L / perSecond;
    this.burstNanos = intervalNanos * perSecond;
  }

  /** Whether one more may go now. */
  boolean take() {
    long now = System.nanoTime();
    while (true) {
      long next = nextFree.get();
      long from = next == Long.MIN_VALUE || next - (now - burstNanos) < 0 ? now - burstNanos : next;
      if (from - now > 0) {
        return false;
      }
      if (nextFree.compareAndSet(next, from + intervalNanos)) {
        return true;
      }
    }
  }
}
