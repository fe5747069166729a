package io.tabula.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Runs an operation attempt after attempt under {@link RetrySettings}: a stale-route answer
 * is retried at once (the node applied nothing), a retryable failure is retried after a
 * backoff if the operation is idempotent, anything else ends it. A node that suggests a
 * delay ({@link TabulaException#retryDelay}) is given at least that long before the next
 * attempt; a wait that would end past the total timeout ends the operation instead. The
 * decision is made from the failure's code and details ({@link Failures}), never its text.
 * Thread-safe.
 */
final class Retrier {
  private final RetrySettings settings;
  private final Executor executor;

  Retrier(RetrySettings settings, Executor executor) {
    this.settings = settings;
    this.executor = executor;
  }

  RetrySettings settings() {
    return settings;
  }

  /**
   * Runs {@code attempt} (given the attempt number from 1) until it succeeds or may not be
   * retried; {@code onFailure} hears of every failed attempt first (to drop stale
   * locations). Fails with a {@link TabulaException}.
   */
  <T> CompletionStage<T> run(boolean idempotent, IntFunction<CompletionStage<T>> attempt,
      Consumer<Throwable> onFailure) {
    return next(idempotent, attempt, onFailure, 1, System.nanoTime());
  }

  private <T> CompletionStage<T> next(boolean idempotent, IntFunction<CompletionStage<T>> attempt,
      Consumer<Throwable> onFailure, int n, long startNanos) {
    CompletionStage<T> result;
    try {
      result = attempt.apply(n);
    } catch (RuntimeException e) {
      result = CompletableFuture.failedFuture(e);
    }
    return result.handle((v, err) -> {
      if (err == null) {
        return CompletableFuture.completedFuture(v);
      }
      onFailure.accept(err);
      TabulaException failure = Failures.of(err);
      Optional<Duration> wait = Optional.empty();
      if (Failures.isStaleRoute(failure)) {
        wait = within(n, startNanos, failure.retryDelay().orElse(Duration.ZERO));
      } else if (idempotent && failure.isRetryable()) {
        wait = within(n, startNanos, waitAfter(n, failure));
      }
      if (wait.isEmpty()) {
        return CompletableFuture.<T>failedFuture(n == 1 ? failure : after(n, failure));
      }
      Executor later = CompletableFuture.delayedExecutor(wait.get().toNanos(), TimeUnit.NANOSECONDS, executor);
      return CompletableFuture.supplyAsync(() -> null, later)
          .thenCompose(x -> next(idempotent, attempt, onFailure, n + 1, startNanos));
    }).thenCompose(x -> x);
  }

  /** The wait before attempt {@code n + 1}, if one is allowed at all. */
  Optional<Duration> within(int n, long startNanos, Duration wait) {
    if (settings.maxAttempts() > 0 && n >= settings.maxAttempts()) {
      return Optional.empty();
    }
    long elapsed = System.nanoTime() - startNanos;
    return elapsed + wait.toNanos() < settings.totalTimeout().toNanos() ? Optional.of(wait) : Optional.empty();
  }

  /** The wait after failed attempt {@code n}: the backoff, or longer if the node asked for longer. */
  Duration waitAfter(int n, TabulaException failure) {
    Duration backoff = backoff(n);
    Duration asked = failure.retryDelay().orElse(Duration.ZERO);
    return asked.compareTo(backoff) > 0 ? asked : backoff;
  }

  /** The randomized backoff after failed attempt {@code n} (from 1). */
  Duration backoff(int n) {
    double b = settings.initialBackoff().toNanos() * Math.pow(settings.multiplier(), Math.min(n - 1, 30));
    long cap = Math.min((long) b, settings.maxBackoff().toNanos());
    return Duration.ofNanos(cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1));
  }

  private static TabulaException after(int attempts, TabulaException last) {
    return last.withDescription(last.description() + " (after " + attempts + " attempts)");
  }
}
