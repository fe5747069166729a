package io.tabula.actors.lease;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.slf4j.Logger;

/** What Tabula's leases ({@link FileLease}, {@link PostgresLease}) share: their timing rule and how a loss is told. */
final class LeaseSupport {
  private LeaseSupport() {}

  /**
   * Refuses timings a holder could not keep: it renews every {@code heartbeat-interval} and
   * counts the lease lost after {@code heartbeat-timeout} without a renewal, so the interval
   * must fit at least twice in the timeout.
   */
  static void checkTimings(LeaseSettings settings) {
    long timeout = settings.timeoutSettings().heartbeatTimeout().toNanos();
    long interval = settings.timeoutSettings().heartbeatInterval().toNanos();
    if (interval <= 0 || interval * 2 > timeout) {
      throw new IllegalArgumentException("lease [" + settings.leaseName() + "]: heartbeat-interval ("
          + Duration.ofNanos(interval) + ") must be positive and at most half of heartbeat-timeout ("
          + Duration.ofNanos(timeout) + ")");
    }
  }

  /** Logs the loss once and tells {@code callback} (if any), off any lock. */
  static void reportLost(Logger log, LeaseSettings settings, Consumer<Optional<Throwable>> callback, String why) {
    log.warn("lease [{}] lost by {}: {}", settings.leaseName(), settings.ownerName(), why);
    if (callback != null) {
      callback.accept(Optional.of(new LeaseException("lease [" + settings.leaseName() + "] lost: " + why)));
    }
  }
}
