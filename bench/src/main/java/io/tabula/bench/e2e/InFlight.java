package io.tabula.bench.e2e;

import java.util.Arrays;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongFunction;

/**
 * Issues requests {@code 0, 1, 2, ...} with up to {@code concurrency} of them in flight,
 * until {@code maxRequests} were issued or the deadline passed, then waits for the last to
 * finish. Records each request's latency (from the call that starts it to its completion)
 * and the values it reports. The first failure stops issuing and is thrown at the end.
 */
final class InFlight {
  /** How long to wait for a free slot or for the last requests before giving up. */
  private static final long STALL_SECONDS = 120;

  private InFlight() {
  }

  /**
   * @param values values written or read in the window
   * @param nanos from the first request's start to the last one's completion
   * @param latencies every request's latency in nanoseconds, sorted
   * @param longestGapNanos the longest time in the window without a request completing (from
   *     the start to the first completion, between two, or from the last start to the last
   *     completion): a stall shows here, a long queue does not
   */
  record Result(long values, long nanos, long[] latencies, long longestGapNanos) {
    Result(long values, long nanos, long[] latencies) {
      this(values, nanos, latencies, 0);
    }

    long requests() {
      return latencies.length;
    }

    /** Both runs as one: values and time added, latencies merged. */
    Result plus(Result other) {
      long[] all = Arrays.copyOf(latencies, latencies.length + other.latencies.length);
      System.arraycopy(other.latencies, 0, all, latencies.length, other.latencies.length);
      Arrays.sort(all);
      return new Result(values + other.values, nanos + other.nanos, all,
          Math.max(longestGapNanos, other.longestGapNanos));
    }

    double valuesPerSecond() {
      return nanos == 0 ? Double.NaN : values * 1e9 / nanos;
    }

    /** The latency at quantile {@code q} (0..1) in milliseconds. */
    double latencyMs(double q) {
      if (latencies.length == 0) {
        return Double.NaN;
      }
      int i = (int) Math.ceil(q * latencies.length) - 1;
      return latencies[Math.max(0, Math.min(latencies.length - 1, i))] / 1e6;
    }
  }

  static Result run(int concurrency, long maxRequests, long deadlineNanos,
      LongFunction<CompletionStage<Integer>> request) throws ExecutionException, TimeoutException,
      InterruptedException {
    return run(concurrency, maxRequests, deadlineNanos, 0, request);
  }

  /**
   * Like {@link #run(int, long, long, LongFunction)}, paced: request {@code k} starts no earlier
   * than {@code k / requestsPerSecond} seconds after the first (0: as fast as the slots allow).
   * A paced run measures a server at a given load, the same for two servers that differ in how
   * fast they go.
   */
  static Result run(int concurrency, long maxRequests, long deadlineNanos, double requestsPerSecond,
      LongFunction<CompletionStage<Integer>> request) throws ExecutionException, TimeoutException,
      InterruptedException {
    if (requestsPerSecond < 0) {
      throw new IllegalArgumentException("a negative pace: " + requestsPerSecond);
    }
    double nanosApart = requestsPerSecond == 0 ? 0 : 1e9 / requestsPerSecond;
    Semaphore slots = new Semaphore(concurrency);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    LongAdder values = new LongAdder();
    Latencies latencies = new Latencies();
    long start = System.nanoTime();
    latencies.started(start);
    for (long k = 0; k < maxRequests && failure.get() == null && System.nanoTime() < deadlineNanos; k++) {
      if (!slots.tryAcquire(STALL_SECONDS, TimeUnit.SECONDS)) {
        throw new TimeoutException("no request finished within " + STALL_SECONDS + " s");
      }
      if (nanosApart > 0) {
        long due = start + (long) (k * nanosApart);
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
          LockSupport.parkNanos(wait);
          if (Thread.interrupted()) {
            throw new InterruptedException("interrupted while pacing requests");
          }
        }
      }
      long t0 = System.nanoTime();
      CompletionStage<Integer> s;
      try {
        s = request.apply(k);
      } catch (RuntimeException e) {
        failure.compareAndSet(null, e);
        slots.release();
        break;
      }
      s.whenComplete((n, err) -> {
        long nanos = System.nanoTime() - t0;
        if (err != null) {
          failure.compareAndSet(null, err);
        } else {
          values.add(n);
          latencies.add(nanos);
        }
        slots.release();
      });
    }
    if (!slots.tryAcquire(concurrency, STALL_SECONDS, TimeUnit.SECONDS)) {
      throw new TimeoutException("the last requests did not finish within " + STALL_SECONDS + " s");
    }
    long nanos = System.nanoTime() - start;
    Throwable err = failure.get();
    if (err != null) {
      throw new ExecutionException(err instanceof CompletionException && err.getCause() != null ? err.getCause()
          : err);
    }
    return new Result(values.sum(), nanos, latencies.sorted(), latencies.longestGap());
  }

  /**
   * A growing array of latencies that completion threads append to, and the longest time
   * between two completions. Thread-safe.
   */
  static final class Latencies {
    private long[] values = new long[1024];
    private int size;
    private long lastCompletion;
    private long longestGap;

    synchronized void started(long nanos) {
      lastCompletion = nanos;
    }

    synchronized void add(long nanos) {
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      values[size++] = nanos;
      long now = System.nanoTime();
      longestGap = Math.max(longestGap, now - lastCompletion);
      lastCompletion = now;
    }

    synchronized long longestGap() {
      return longestGap;
    }

    synchronized long[] sorted() {
      long[] out = Arrays.copyOf(values, size);
      Arrays.sort(out);
      return out;
    }
  }
}
