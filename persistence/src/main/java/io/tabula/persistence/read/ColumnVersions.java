package io.tabula.persistence.read;

import io.tabula.persistence.model.CellKey;
import java.util.Arrays;

/**
 * Walks the PUTs of a row in {@link CellKey#ORDER}, column by column: tells where a new
 * column starts, which PUT is an older write of a timestamp already seen (shadowed: only the
 * latest write of a timestamp counts), and the rank of each visible version, the input of a
 * GC policy. Shared by reads and compactions so they agree on what a version is. Not
 * thread-safe.
 */
public final class ColumnVersions {
  /** What a PUT is to its column. */
  public enum Step {
    /** The first PUT of a new column. */
    NEW_COLUMN,
    /** The next timestamp of the same column. */
    NEXT_VERSION,
    /** An older write of the timestamp just seen: ignore it. */
    SHADOWED
  }

  private byte[] family;
  private byte[] qualifier;
  private long lastTimestamp;
  private int rank;

  /** Forgets the column: call at the first entry of each row. */
  public void startRow() {
    family = null;
  }

  public Step step(CellKey put) {
    if (family == null || !Arrays.equals(family, put.family()) || !Arrays.equals(qualifier, put.qualifier())) {
      family = put.family();
      qualifier = put.qualifier();
      lastTimestamp = put.timestamp();
      rank = 0;
      return Step.NEW_COLUMN;
    }
    if (put.timestamp() == lastTimestamp) {
      return Step.SHADOWED;
    }
    lastTimestamp = put.timestamp();
    return Step.NEXT_VERSION;
  }

  /** The rank (0 = newest) of a version found visible; call once per visible version. */
  public int nextRank() {
    return rank++;
  }
}
