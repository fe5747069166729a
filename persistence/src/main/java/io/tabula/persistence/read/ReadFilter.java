package io.tabula.persistence.read;

import java.util.Set;

/**
 * What a read keeps of the visible cells, evaluated inside the engine so unwanted data
 * is dropped early and whole locality groups can be skipped (paper §3: scans restricted
 * to families, columns, timestamps and versions). Richer filters (the Cloud Bigtable
 * RowFilter) run above the engine on the rows this returns.
 *
 * @param families families to read, or null for all
 * @param column keeps a column (family, qualifier) or not; null keeps all
 * @param startTimestamp lowest timestamp kept (inclusive), microseconds
 * @param endTimestamp timestamp bound (exclusive); {@link Long#MAX_VALUE} for none
 * @param maxVersions newest versions kept per column after the timestamp range; 0 for all
 */
public record ReadFilter(Set<String> families, ColumnPredicate column, long startTimestamp, long endTimestamp,
    int maxVersions) {
  private static final ReadFilter ALL = new ReadFilter(null, null, 0, Long.MAX_VALUE, 0);

  public ReadFilter {
    if (families != null) {
      families = Set.copyOf(families);
    }
    if (startTimestamp < 0 || endTimestamp <= startTimestamp) {
      throw new IllegalArgumentException("timestamp range [" + startTimestamp + ", " + endTimestamp
          + ") is not a non-empty range of non-negative timestamps");
    }
    if (maxVersions < 0) {
      throw new IllegalArgumentException("maxVersions must be >= 0, was " + maxVersions);
    }
  }

  public static ReadFilter all() {
    return ALL;
  }

  public ReadFilter withFamilies(Set<String> f) {
    return new ReadFilter(f, column, startTimestamp, endTimestamp, maxVersions);
  }

  public ReadFilter withColumn(ColumnPredicate c) {
    return new ReadFilter(families, c, startTimestamp, endTimestamp, maxVersions);
  }

  public ReadFilter withTimestamps(long start, long end) {
    return new ReadFilter(families, column, start, end, maxVersions);
  }

  public ReadFilter withMaxVersions(int n) {
    return new ReadFilter(families, column, startTimestamp, endTimestamp, n);
  }

  public boolean wantsFamily(String family) {
    return families == null || families.contains(family);
  }

  /** Chooses columns by family and qualifier. */
  @FunctionalInterface
  public interface ColumnPredicate {
    boolean test(String family, byte[] qualifier);
  }
}
