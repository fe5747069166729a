package io.tabula.client;

import static io.tabula.client.Fixtures.assertRefused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.ErrorDetails;
import io.tabula.protocol.errors.WireNames;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which failures the client tries again, how often, how long it waits in between and when
 * it gives up; attempts are plain futures run on a plain executor, no network.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RetrierTest {
  /** Backoffs so long that a retry which waited for one would miss every bound below. */
  private static final RetrySettings SLOW_BACKOFF = new RetrySettings(0, Duration.ofMinutes(1), Duration.ofMinutes(1),
      2.0, Duration.ofSeconds(5), Duration.ofMinutes(10));
  /** Short backoffs, at most 20 attempts. */
  private static final RetrySettings FAST = new RetrySettings(20, Duration.ofMillis(1), Duration.ofMillis(5), 2.0,
      Duration.ofSeconds(5), Duration.ofSeconds(20));

  private final ExecutorService executor = Executors.newFixedThreadPool(2);

  @AfterEach
  void stop() {
    executor.shutdownNow();
  }

  @Test
  void aStaleRouteIsRetriedAtOnceEvenWhenNotIdempotent() throws Exception {
    Attempts a = new Attempts(staleRoute(true), staleRoute(false));
    List<Throwable> heard = new CopyOnWriteArrayList<>();
    CompletionStage<String> result = new Retrier(SLOW_BACKOFF, executor).run(false, a, heard::add);
    // With a one-minute backoff, only an immediate retry finishes within the wait below.
    assertEquals("ok after 3", result.toCompletableFuture().get(10, TimeUnit.SECONDS));
    assertEquals(3, a.count());
    assertEquals(2, heard.size(), "the caller hears of every failed attempt, to drop stale locations");
  }

  @Test
  void aDescriptionThatMerelySaysStaleRouteIsNotAStaleRoute() throws Exception {
    // Neither the trailer nor the reason: a FAILED_PRECONDITION like any other, whatever its text.
    Attempts a = new Attempts(Status.FAILED_PRECONDITION.withDescription("stale route: tablet t1 split"));
    TabulaException e = failure(new Retrier(FAST, executor).run(false, a, x -> { }));
    assertEquals(1, a.count(), "not retried");
    assertEquals(Status.Code.FAILED_PRECONDITION, e.code());
    assertEquals(Optional.empty(), e.reason());
    assertEquals("stale route: tablet t1 split", e.description());
  }

  @Test
  void theNodesReasonAndSuggestedDelayReachTheCaller() throws Exception {
    Attempts a = new Attempts(refusal(ErrorCode.RESOURCE_EXHAUSTED, "row too large: 300 MiB", null));
    TabulaException e = failure(new Retrier(FAST, executor).run(false, a, x -> { }));
    assertEquals(Optional.of(ErrorCode.RESOURCE_EXHAUSTED), e.reason());
    assertEquals(Optional.empty(), e.retryDelay());
    assertEquals("RESOURCE_EXHAUSTED: row too large: 300 MiB", e.getMessage());

    Attempts stale = new Attempts(staleRoute(true));
    assertEquals(Optional.of(ErrorCode.STALE_ROUTE), failure(new Retrier(FAST.withMaxAttempts(1), executor)
        .run(false, stale, x -> { })).reason(), "the trailer alone names the reason too");

    Attempts retried = new Attempts(refusal(ErrorCode.UNAVAILABLE, "tablet t1 is moving", Duration.ofMillis(20)));
    TabulaException last = failure(new Retrier(FAST.withMaxAttempts(3), executor).run(true, retried, x -> { }));
    assertEquals(3, retried.count());
    assertEquals("tablet t1 is moving (after 3 attempts)", last.description());
    assertEquals(Optional.of(ErrorCode.UNAVAILABLE), last.reason(), "kept when the attempts are counted");
    assertEquals(Optional.of(Duration.ofMillis(20)), last.retryDelay());
  }

  @Test
  void aSuggestedRetryDelayIsWaitedOutBeforeTheNextAttempt() throws Exception {
    // FAST backs off 1 to 5 ms; the node asks for 400 ms, which the second attempt must wait.
    Attempts a = new Attempts(refusal(ErrorCode.UNAVAILABLE, "tablet t1 is moving", Duration.ofMillis(400)),
        Status.UNAVAILABLE);
    assertEquals("ok after 3", new Retrier(FAST, executor).run(true, a, x -> { }).toCompletableFuture()
        .get(10, TimeUnit.SECONDS));
    assertTrue(a.millisBetween(1) >= 400, "the second attempt started " + a.millisBetween(1) + " ms after the first");

    StatusRuntimeException split = refusal(ErrorCode.STALE_ROUTE, "tablet t1 split", Duration.ofMillis(300));
    Attempts stale = new Attempts(split, split);
    assertEquals("ok after 3", new Retrier(SLOW_BACKOFF, executor).run(false, stale, x -> { })
        .toCompletableFuture().get(10, TimeUnit.SECONDS));
    assertTrue(stale.millisBetween(1) >= 300, "a stale route waits a suggested delay too: "
        + stale.millisBetween(1) + " ms");
  }

  @Test
  void aSuggestedDelayPastTheTotalTimeoutEndsTheOperationAtOnce() throws Exception {
    // failure() waits at most 10 s: a retrier that slept out the 30 s before giving up fails the test.
    RetrySettings s = FAST.withTotalTimeout(Duration.ofSeconds(2));
    Attempts a = new Attempts(refusal(ErrorCode.UNAVAILABLE, "storage failing", Duration.ofSeconds(30)));
    TabulaException e = failure(new Retrier(s, executor).run(true, a, x -> { }));
    assertEquals(1, a.count(), "no attempt after the total timeout");
    assertEquals(Optional.of(Duration.ofSeconds(30)), e.retryDelay());
  }

  @Test
  void aRetryableFailureIsRetriedOnlyWhenIdempotent() throws Exception {
    Attempts idempotent = new Attempts(Status.UNAVAILABLE, Status.DEADLINE_EXCEEDED, Status.ABORTED,
        Status.RESOURCE_EXHAUSTED);
    assertEquals("ok after 5", new Retrier(FAST, executor).run(true, idempotent, e -> { }).toCompletableFuture()
        .get(10, TimeUnit.SECONDS));
    assertEquals(5, idempotent.count());

    Attempts once = new Attempts(Status.UNAVAILABLE);
    TabulaException e = failure(new Retrier(FAST, executor).run(false, once, x -> { }));
    assertEquals(1, once.count());
    assertEquals(Status.Code.UNAVAILABLE, e.code());
    assertFalse(e.getMessage().contains("attempts"), "a single attempt is not reported as retried: " + e);
  }

  @Test
  void anOtherFailureEndsAtOnceEvenWhenIdempotent() throws Exception {
    for (Status s : List.of(Status.INVALID_ARGUMENT, Status.NOT_FOUND, Status.INTERNAL, Status.PERMISSION_DENIED,
        Status.FAILED_PRECONDITION.withDescription("not a stale route"))) {
      Attempts a = new Attempts(s);
      TabulaException e = failure(new Retrier(FAST, executor).run(true, a, x -> { }));
      assertEquals(1, a.count(), s.toString());
      assertEquals(s.getCode(), e.code());
    }
  }

  @Test
  void givesUpAfterMaxAttempts() throws Exception {
    Attempts a = new Attempts(Status.UNAVAILABLE.withDescription("node down"));
    TabulaException e = failure(new Retrier(FAST.withMaxAttempts(4), executor).run(true, a, x -> { }));
    assertEquals(4, a.count());
    assertEquals(Status.Code.UNAVAILABLE, e.code());
    assertEquals("UNAVAILABLE: node down (after 4 attempts)", e.getMessage());

    Attempts stale = new Attempts(staleRoute(true));
    assertEquals(Status.Code.FAILED_PRECONDITION,
        failure(new Retrier(FAST.withMaxAttempts(3), executor).run(false, stale, x -> { })).code());
    assertEquals(3, stale.count(), "stale routes count against the attempts too");
  }

  @Test
  void noAttemptStartsAfterTheTotalTimeout() throws Exception {
    Duration total = Duration.ofMillis(400);
    RetrySettings s = new RetrySettings(0, Duration.ofMillis(20), Duration.ofMillis(40), 2.0, Duration.ofSeconds(1),
        total);
    Attempts a = new Attempts(Status.UNAVAILABLE);
    long t0 = System.nanoTime();
    TabulaException e = failure(new Retrier(s, executor).run(true, a, x -> { }));
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertEquals(Status.Code.UNAVAILABLE, e.code());
    assertTrue(a.count() >= 3, "backoffs of at most 40 ms leave room for several attempts in 400 ms: " + a.count());
    // The Retrier schedules an attempt only if its wait ends before the total timeout; the
    // margin is for the scheduler's delay, not for another backoff.
    long lastStart = TimeUnit.NANOSECONDS.toMillis(a.lastStartNanos() - t0);
    assertTrue(lastStart < total.toMillis() + 200, "an attempt started at " + lastStart + " ms");
    assertTrue(elapsedMillis < total.toMillis() + 2_000, "gave up after " + elapsedMillis + " ms");
  }

  @Test
  void backoffGrowsByTheMultiplierUpToTheCapWithJitterInTheUpperHalf() {
    RetrySettings s = new RetrySettings(0, Duration.ofMillis(100), Duration.ofSeconds(1), 2.0, Duration.ofSeconds(1),
        Duration.ofMinutes(1));
    Retrier r = new Retrier(s, executor);
    long[] ceiling = {100, 200, 400, 800, 1000, 1000};
    for (int n = 1; n <= ceiling.length; n++) {
      long min = Long.MAX_VALUE;
      long max = 0;
      for (int i = 0; i < 2_000; i++) {
        long b = r.backoff(n).toMillis();
        min = Math.min(min, b);
        max = Math.max(max, b);
      }
      long c = ceiling[n - 1];
      assertTrue(min >= c / 2 && max <= c, "backoff after attempt " + n + " in [" + min + ", " + max + "] ms, "
          + "expected within [" + c / 2 + ", " + c + "]");
      assertTrue(max - min > c / 4, "backoff after attempt " + n + " is not randomized: [" + min + ", " + max + "]");
    }
    Duration far = r.backoff(1_000);
    assertTrue(far.toMillis() >= 500 && far.toMillis() <= 1000, "no overflow far out: " + far);
  }

  @Test
  void withinRefusesAWaitPastTheTotalTimeoutOrTheLastAttempt() {
    RetrySettings s = new RetrySettings(3, Duration.ofMillis(1), Duration.ofMillis(1), 1.0, Duration.ofSeconds(1),
        Duration.ofSeconds(10));
    Retrier r = new Retrier(s, executor);
    long now = System.nanoTime();
    assertEquals(Optional.of(Duration.ofSeconds(1)), r.within(1, now, Duration.ofSeconds(1)));
    assertEquals(Optional.empty(), r.within(1, now, Duration.ofSeconds(11)));
    assertEquals(Optional.empty(), r.within(1, now - TimeUnit.SECONDS.toNanos(10), Duration.ZERO));
    assertEquals(Optional.empty(), r.within(3, now, Duration.ZERO), "the third attempt was the last");
  }

  @Test
  void anAttemptThatThrowsFailsLikeOne() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    TabulaException e = failure(new Retrier(FAST, executor).<String>run(true, n -> {
      calls.incrementAndGet();
      throw new IllegalArgumentException("bad row");
    }, x -> { }));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals(1, calls.get());
  }

  @Test
  void settingsRefuseNonsense() {
    assertRefused("maxAttempts", () -> new RetrySettings(-1, Duration.ofMillis(1), Duration.ofMillis(1), 1.0,
        Duration.ofSeconds(1), Duration.ofSeconds(1)));
    assertRefused("initialBackoff", () -> new RetrySettings(0, Duration.ZERO, Duration.ofMillis(1), 1.0,
        Duration.ofSeconds(1), Duration.ofSeconds(1)));
    assertRefused("multiplier", () -> new RetrySettings(0, Duration.ofMillis(1), Duration.ofMillis(1), 0.5,
        Duration.ofSeconds(1), Duration.ofSeconds(1)));
    assertRefused("totalTimeout", () -> RetrySettings.DEFAULT.withTotalTimeout(Duration.ofSeconds(-1)));
    assertEquals(1, RetrySettings.none(Duration.ofSeconds(1)).maxAttempts());
  }

  private static TabulaException failure(CompletionStage<?> stage) throws InterruptedException {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> stage.toCompletableFuture().get(10, TimeUnit.SECONDS));
    return assertInstanceOf(TabulaException.class, e.getCause());
  }

  /**
   * A FAILED_PRECONDITION a node sends for a request naming the wrong tablet: with the
   * stale-route trailer only, or with the STALE_ROUTE reason in the status details only.
   * Neither description says "stale route", so only the trailer or the reason can tell.
   */
  private static StatusRuntimeException staleRoute(boolean byTrailer) {
    if (byTrailer) {
      Metadata trailers = new Metadata();
      trailers.put(Metadata.Key.of(WireNames.STALE_ROUTE_TRAILER, Metadata.ASCII_STRING_MARSHALLER), "1");
      return Status.FAILED_PRECONDITION.withDescription("tablet t1 does not hold row r").asRuntimeException(trailers);
    }
    return refusal(ErrorCode.STALE_ROUTE, "tablet t1 split", null);
  }

  /** A refusal as a node sends it: the code's status, and the details in their trailer. */
  static StatusRuntimeException refusal(ErrorCode code, String message, Duration retryDelay) {
    Metadata trailers = new Metadata();
    trailers.put(Metadata.Key.of(WireNames.STATUS_DETAILS_TRAILER, Metadata.BINARY_BYTE_MARSHALLER),
        ErrorDetails.of(code, message, null, retryDelay).toByteArray());
    return Status.fromCode(code.grpcCode()).withDescription(message).asRuntimeException(trailers);
  }

  /**
   * Attempts that fail with the given outcomes in turn (the last one again once they run
   * out, if it is a failure), then succeed with "ok after n". Failures come wrapped in a
   * CompletionException now and then, as composed futures deliver them.
   */
  private static final class Attempts implements IntFunction<CompletionStage<String>> {
    private final List<Object> failures;
    private final boolean repeatLast;
    private final AtomicInteger count = new AtomicInteger();
    private final List<Long> startNanos = new CopyOnWriteArrayList<>();

    Attempts(Object... failures) {
      this.failures = List.of(failures);
      this.repeatLast = failures.length == 1;
    }

    @Override
    public CompletionStage<String> apply(int n) {
      startNanos.add(System.nanoTime());
      int i = count.incrementAndGet();
      assertEquals(i, n, "attempts are numbered from 1");
      if (i > failures.size() && !repeatLast) {
        return CompletableFuture.completedFuture("ok after " + i);
      }
      Object f = failures.get(Math.min(i, failures.size()) - 1);
      RuntimeException e = f instanceof Status s ? s.asRuntimeException() : (RuntimeException) f;
      return CompletableFuture.failedFuture(i % 2 == 0 ? new CompletionException(e) : e);
    }

    int count() {
      return count.get();
    }

    long lastStartNanos() {
      return startNanos.get(startNanos.size() - 1);
    }

    /** How long after attempt {@code n} started attempt {@code n + 1} did, in milliseconds. */
    long millisBetween(int n) {
      return TimeUnit.NANOSECONDS.toMillis(startNanos.get(n) - startNanos.get(n - 1));
    }
  }
}
