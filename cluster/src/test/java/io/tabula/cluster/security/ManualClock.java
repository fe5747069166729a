package io.tabula.cluster.security;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock that stands still until a test moves it. Thread-safe. */
final class ManualClock extends Clock {
  private final AtomicReference<Instant> now;

  ManualClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  void advance(Duration by) {
    now.updateAndGet(t -> t.plus(by));
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("a test clock has one zone");
  }
}
