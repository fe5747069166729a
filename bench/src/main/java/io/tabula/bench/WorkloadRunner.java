package io.tabula.bench;

import java.io.IOException;
import java.util.SplittableRandom;

/**
 * Runs one workload on one engine and times it. Every loop does the same work on either
 * engine: build the key, call the engine, check the answer. Reads check that every value
 * has the right length and, every {@value #FULL_CHECK_EVERY} reads, the right bytes; a
 * wrong answer stops the benchmark.
 *
 * <p>Not thread-safe.
 */
final class WorkloadRunner {
  private static final int FULL_CHECK_EVERY = 1024;

  /**
   * @param readOps largest number of timed reads per read workload
   * @param readNanos longest timed window of a read workload or a scan
   * @param writeNanos longest timed window of a write workload
   * @param warmupOps untimed reads before a timed read workload
   */
  record Limits(long readOps, long readNanos, long writeNanos, long warmupOps) {}

  private final Dataset data;
  private final Limits limits;

  WorkloadRunner(Dataset data, Limits limits) {
    this.data = data;
    this.limits = limits;
  }

  /** Writes {@code order} until done or the write time limit. */
  Measurement write(Engine e, int[] order) throws IOException {
    CacheCounters before = e.cacheCounters();
    long start = System.nanoTime();
    int n = e.write(data, order, start + limits.writeNanos());
    long nanos = System.nanoTime() - start;
    return new Measurement(n, nanos, n * data.rowBytes(), e.cacheCounters().minus(before));
  }

  /** Point reads of uniformly random rows of {@code [from, to)}, after a warm-up on the same range. */
  Measurement randomRead(Engine e, int from, int to, long seed) throws IOException {
    SplittableRandom r = new SplittableRandom(seed);
    for (long n = 0; n < limits.warmupOps(); n++) {
      read(e, from + r.nextInt(to - from), n);
    }
    CacheCounters before = e.cacheCounters();
    long start = System.nanoTime();
    long deadline = start + limits.readNanos();
    long n = 0;
    while (n < limits.readOps() && ((n & 255) != 0 || System.nanoTime() < deadline)) {
      read(e, from + r.nextInt(to - from), n);
      n++;
    }
    long nanos = System.nanoTime() - start;
    return new Measurement(n, nanos, n * data.rowBytes(), e.cacheCounters().minus(before));
  }

  /** Point reads in key order from a random row, wrapping at the end, after a warm-up elsewhere. */
  Measurement sequentialRead(Engine e, long seed) throws IOException {
    int rows = data.rows();
    int at = new SplittableRandom(seed).nextInt(rows);
    for (long n = 0; n < limits.warmupOps(); n++) {
      read(e, (int) ((at + rows / 2 + n) % rows), n);
    }
    CacheCounters before = e.cacheCounters();
    long start = System.nanoTime();
    long deadline = start + limits.readNanos();
    long n = 0;
    while (n < limits.readOps() && ((n & 255) != 0 || System.nanoTime() < deadline)) {
      read(e, (int) ((at + n) % rows), n);
      n++;
    }
    long nanos = System.nanoTime() - start;
    return new Measurement(n, nanos, n * data.rowBytes(), e.cacheCounters().minus(before));
  }

  /** Reads every row of {@code [from, to)} in key order, {@code passes} times, untimed: fills the block cache. */
  void warm(Engine e, int from, int to, int passes) throws IOException {
    for (int p = 0; p < passes; p++) {
      for (int i = from; i < to; i++) {
        read(e, i, i);
      }
    }
  }

  /** One full-range scan, after a short untimed one. */
  Measurement scan(Engine e) throws IOException {
    e.scan(System.nanoTime() + Math.min(limits.readNanos() / 10, 2_000_000_000L));
    CacheCounters before = e.cacheCounters();
    long start = System.nanoTime();
    ScanTally t = e.scan(start + limits.readNanos());
    long nanos = System.nanoTime() - start;
    return new Measurement(t.rows(), nanos, t.bytes(), e.cacheCounters().minus(before));
  }

  private void read(Engine e, int i, long n) throws IOException {
    byte[] v = e.get(data.key(i));
    if (v == null || v.length != data.valueBytes()) {
      throw new IllegalStateException(e.name() + " returned " + (v == null ? "no value" : v.length + " bytes")
          + " for row " + i + "; expected " + data.valueBytes() + " bytes");
    }
    if (n % FULL_CHECK_EVERY == 0 && !data.isValueOf(i, v)) {
      throw new IllegalStateException(e.name() + " returned the wrong bytes for row " + i);
    }
  }
}
