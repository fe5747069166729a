package io.tabula.persistence.read;

import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The deletes in force at the current position of a forward pass over one row, and the
 * question every reader and compaction asks: is this PUT hidden?
 *
 * <p>Relies on {@link CellKey#ORDER} putting each tombstone before what it covers: feed
 * every entry of the row to {@link #accept}, in order, and ask {@link #hides} of each PUT.
 * A tombstone hides the PUTs it covers whose sequence is lower than its own. Not
 * thread-safe.
 */
public final class Tombstones {
  private long rowDelete = -1;
  private byte[] family;
  private long familyDelete = -1;
  private byte[] columnFamily;
  private byte[] columnQualifier;
  private final List<long[]> columnDeletes = new ArrayList<>();

  /** The 16-byte value of a DELETE_COLUMN entry: start (inclusive) and end (exclusive) timestamps. */
  public static byte[] encodeRange(long startInclusive, long endExclusive) {
    return ByteBuffer.allocate(16).putLong(startInclusive).putLong(endExclusive).array();
  }

  /** Forgets everything: call at the first entry of each row. */
  public void startRow() {
    rowDelete = -1;
    family = null;
    familyDelete = -1;
    columnFamily = null;
    columnQualifier = null;
    columnDeletes.clear();
  }

  /** Takes note of {@code key} (and, for a column delete, its range in {@code value}). */
  public void accept(CellKey key, byte[] value) {
    if (key.kind() == CellKind.TOKEN) {
      return; // of no family: deletes nothing, and is deleted by nothing
    }
    if (key.kind() == CellKind.DELETE_ROW) {
      rowDelete = Math.max(rowDelete, key.sequence());
      return;
    }
    if (family == null || !Arrays.equals(family, key.family())) {
      family = key.family();
      familyDelete = -1;
    }
    if (key.kind() == CellKind.DELETE_FAMILY) {
      familyDelete = Math.max(familyDelete, key.sequence());
      return;
    }
    if (columnFamily == null || !Arrays.equals(columnFamily, key.family())
        || !Arrays.equals(columnQualifier, key.qualifier())) {
      columnFamily = key.family();
      columnQualifier = key.qualifier();
      columnDeletes.clear();
    }
    if (key.kind() == CellKind.DELETE_COLUMN) {
      ByteBuffer b = ByteBuffer.wrap(value);
      columnDeletes.add(new long[] {b.getLong(), b.getLong(), key.sequence()});
    }
  }

  /** Whether a PUT already passed to {@link #accept} is deleted. */
  public boolean hides(CellKey put) {
    long seq = put.sequence();
    if (seq < rowDelete || seq < familyDelete) {
      return true;
    }
    for (long[] d : columnDeletes) {
      if (seq < d[2] && put.timestamp() >= d[0] && put.timestamp() < d[1]) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a tombstone not yet passed to {@link #accept} is made redundant by a wider or
   * later one already seen: a row delete, or a delete of its own family.
   */
  public boolean redundant(CellKey tombstone) {
    long seq = tombstone.sequence();
    boolean sameFamily = family != null && Arrays.equals(family, tombstone.family());
    return switch (tombstone.kind()) {
      case DELETE_ROW -> seq < rowDelete;
      case DELETE_FAMILY, DELETE_COLUMN -> seq < rowDelete || (sameFamily && seq < familyDelete);
      case PUT, MERGE, TOKEN -> false;
    };
  }
}
