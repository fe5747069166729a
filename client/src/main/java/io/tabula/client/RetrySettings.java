package io.tabula.client;

import java.time.Duration;

/**
 * How the client retries an idempotent operation that failed with a retryable code
 * ({@link TabulaException#isRetryable}): waits a random time in [b/2, b] where b starts
 * at {@code initialBackoff} and grows by {@code multiplier} up to {@code maxBackoff},
 * and gives up after {@code maxAttempts} attempts (0 for no limit) or when the next
 * attempt would start after {@code totalTimeout}. Every attempt of a unary call has the
 * gRPC deadline {@code attemptTimeout}. Immutable.
 */
public record RetrySettings(int maxAttempts, Duration initialBackoff, Duration maxBackoff, double multiplier,
    Duration attemptTimeout, Duration totalTimeout) {
  /** Up to 60 s in all, attempts of at most 20 s, waits from 10 ms growing to 2 s. */
  public static final RetrySettings DEFAULT = new RetrySettings(0, Duration.ofMillis(10), Duration.ofSeconds(2), 2.0,
      Duration.ofSeconds(20), Duration.ofSeconds(60));

  public RetrySettings {
    if (maxAttempts < 0) {
      throw new IllegalArgumentException("maxAttempts must be >= 0 (0 = no limit), was " + maxAttempts);
    }
    positive("initialBackoff", initialBackoff);
    positive("maxBackoff", maxBackoff);
    positive("attemptTimeout", attemptTimeout);
    positive("totalTimeout", totalTimeout);
    if (multiplier < 1.0) {
      throw new IllegalArgumentException("multiplier must be >= 1, was " + multiplier);
    }
  }

  /** No retries at all: one attempt of at most {@code timeout}. */
  public static RetrySettings none(Duration timeout) {
    return new RetrySettings(1, Duration.ofMillis(1), Duration.ofMillis(1), 1.0, timeout, timeout);
  }

  public RetrySettings withTotalTimeout(Duration total) {
    return new RetrySettings(maxAttempts, initialBackoff, maxBackoff, multiplier, attemptTimeout, total);
  }

  public RetrySettings withAttemptTimeout(Duration attempt) {
    return new RetrySettings(maxAttempts, initialBackoff, maxBackoff, multiplier, attempt, totalTimeout);
  }

  public RetrySettings withMaxAttempts(int attempts) {
    return new RetrySettings(attempts, initialBackoff, maxBackoff, multiplier, attemptTimeout, totalTimeout);
  }

  private static void positive(String name, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, was " + d);
    }
  }
}
