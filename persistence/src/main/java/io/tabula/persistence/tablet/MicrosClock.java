package io.tabula.persistence.tablet;

import java.time.Instant;

/** Current time in microseconds since the epoch; injected so tests control time. */
@FunctionalInterface
public interface MicrosClock {
  long nowMicros();

  MicrosClock SYSTEM = () -> {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  };
}
