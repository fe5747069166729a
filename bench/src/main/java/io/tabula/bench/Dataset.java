package io.tabula.bench;

import java.util.SplittableRandom;

/**
 * The rows every engine is loaded with: fixed-width keys {@code row%010d} and values of
 * random, incompressible bytes. A value is a pure function of the seed and the row index,
 * so both engines store identical data and a read can be checked without keeping the
 * data set in memory.
 *
 * <p>Immutable and thread-safe.
 */
public final class Dataset {
  /** {@code "row"} and ten digits: every key has the same width, so byte order is numeric order. */
  public static final int KEY_BYTES = 13;
  private static final byte[] PREFIX = {'r', 'o', 'w'};
  private static final int MAX_ROWS = 1_000_000_000;

  private final int rows;
  private final int valueBytes;
  private final long seed;

  /**
   * @param rows number of rows, keys {@code row0000000000} to {@code row<rows-1>}
   * @param valueBytes size of every value
   * @param seed drives values and key orders
   */
  private final byte[][] pool;

  public Dataset(int rows, int valueBytes, long seed) {
    if (rows < 1 || rows > MAX_ROWS) {
      throw new IllegalArgumentException("rows must be in [1, " + MAX_ROWS + "], was " + rows);
    }
    if (valueBytes < 1) {
      throw new IllegalArgumentException("valueBytes must be positive, was " + valueBytes);
    }
    this.rows = rows;
    this.valueBytes = valueBytes;
    this.pool = new byte[POOL][valueBytes];
    SplittableRandom r = new SplittableRandom(seed);
    for (byte[] v : pool) {
      r.nextBytes(v);
    }
    this.seed = seed;
  }

  public int rows() {
    return rows;
  }

  public int valueBytes() {
    return valueBytes;
  }

  public long seed() {
    return seed;
  }

  /** Bytes of key and value of one row, as a benchmark counts them. */
  public long rowBytes() {
    return KEY_BYTES + valueBytes;
  }

  /** The key of row {@code i}: a fresh array. */
  public byte[] key(int i) {
    byte[] k = new byte[KEY_BYTES];
    System.arraycopy(PREFIX, 0, k, 0, PREFIX.length);
    int n = i;
    for (int p = KEY_BYTES - 1; p >= PREFIX.length; p--) {
      k[p] = (byte) ('0' + n % 10);
      n /= 10;
    }
    return k;
  }

  /**
   * The value of row {@code i}: a fresh copy of one of {@link #POOL} random (incompressible)
   * values, chosen by a hash of {@code i}. Drawn once, so the timed loops measure the
   * engines rather than the random number generator.
   */
  public byte[] value(int i) {
    return pool[(int) ((mix(seed * 0x9E3779B97F4A7C15L + i) >>> 1) % POOL)].clone();
  }

  private static final int POOL = 4096;

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** Whether {@code v} is the value of row {@code i}. */
  public boolean isValueOf(int i, byte[] v) {
    return v != null && java.util.Arrays.equals(v, value(i));
  }

  /** The row indexes in key order. */
  public int[] keyOrder() {
    int[] order = new int[rows];
    for (int i = 0; i < rows; i++) {
      order[i] = i;
    }
    return order;
  }

  /** A permutation of the row indexes, the same for a given seed and salt. */
  public int[] permutation(long salt) {
    int[] order = keyOrder();
    SplittableRandom r = new SplittableRandom(seed ^ salt);
    for (int i = rows - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    return order;
  }
}
