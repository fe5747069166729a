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
   * @param scanPasses full scans in the timed window of the scan workload
   */
  record Limits(long readOps, long readNanos, long writeNanos, long warmupOps, int scanPasses) {}

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

  /** Point reads of rows {@code [0, rows)} in key order from a random row, wrapping, after a warm-up elsewhere. */
  Measurement sequentialRead(Engine e, int rows, long seed) throws IOException {
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

  /**
   * Full-range scans, {@link Limits#scanPasses()} of them back to back or until the time
   * limit, after a short untimed one. Only a pass cut short by the time limit returns fewer
   * rows than {@code expectedRows}.
   *
   * @throws IllegalStateException if a pass that was not cut short missed rows
   */
  Measurement scan(Engine e, long expectedRows) throws IOException {
    e.scan(System.nanoTime() + Math.min(limits.readNanos() / 10, 2_000_000_000L));
    CacheCounters before = e.cacheCounters();
    long start = System.nanoTime();
    long deadline = start + limits.readNanos();
    long rows = 0;
    long bytes = 0;
    for (int pass = 0; pass < limits.scanPasses() && System.nanoTime() < deadline; pass++) {
      ScanTally t = e.scan(deadline);
      if (t.rows() != expectedRows && System.nanoTime() < deadline) {
        throw new IllegalStateException(e.name() + " scan returned " + t.rows() + " rows; expected " + expectedRows);
      }
      rows += t.rows();
      bytes += t.bytes();
    }
    long nanos = System.nanoTime() - start;
    return new Measurement(rows, nanos, bytes, e.cacheCounters().minus(before));
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
