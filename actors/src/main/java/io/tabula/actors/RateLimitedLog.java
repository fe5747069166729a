package io.tabula.actors;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * A WARN line at most once per interval, for things that can happen many times a second
 * (a client sending malformed requests, a failing disk): the first one in an interval is
 * logged, the others are counted and the count goes with the next line that is logged. A
 * hostile client cannot fill the disk with these. Thread-safe (lock-free).
 */
public final class RateLimitedLog {
  private final Logger log;
  private final long intervalNanos;
  /** When the next line may be written, on {@link System#nanoTime}'s scale. */
  private final AtomicLong nextNanos = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong leftOut = new AtomicLong();

  public RateLimitedLog(Logger log, Duration interval) {
    this.log = log;
    this.intervalNanos = interval.toNanos();
  }

  /**
   * Logs {@code message} at WARN (with {@code cause}'s stack when it is not null) unless a
   * line went out less than an interval ago.
   *
   * @return whether this one was logged
   */
  public boolean warn(String message, Throwable cause) {
    String line = line(message);
    if (line == null) {
      return false;
    }
    if (cause == null) {
      log.warn(line);
    } else {
      log.warn(line, cause);
    }
    return true;
  }

  /** As {@link #warn} without a cause, at INFO: for records (an audit's) rather than problems. */
  public boolean info(String message) {
    String line = line(message);
    if (line == null) {
      return false;
    }
    log.info(line);
    return true;
  }

  /** {@code message} with the count of those left out, or null when this one is left out too. */
  private String line(String message) {
    long now = System.nanoTime();
    long next = nextNanos.get();
    if ((next != Long.MIN_VALUE && now - next < 0) || !nextNanos.compareAndSet(next, now + intervalNanos)) {
      leftOut.incrementAndGet();
      return null;
    }
    long skipped = leftOut.getAndSet(0);
    return skipped == 0 ? message : message + " (and " + skipped + " more like it left out of this log)";
  }
}
