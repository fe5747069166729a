package io.tabula.persistence.sstable;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.Arrays;

/**
 * What an SSTable holds, from its properties block. With no entries, the rows are empty
 * and the sequences 0. Immutable; callers must not modify the arrays.
 *
 * @param entries entries of every kind
 * @param fileBytes size of the whole file
 * @param firstRow row of the first entry
 * @param lastRow row of the last entry
 * @param maxSequence largest entry sequence
 * @param minSequence smallest entry sequence
 * @param tombstones DELETE_ROW, DELETE_FAMILY and DELETE_COLUMN entries
 */
public record SSTableInfo(long entries, long fileBytes, byte[] firstRow, byte[] lastRow, long maxSequence,
    long minSequence, long tombstones) {
  @Override
  public boolean equals(Object o) {
    return o instanceof SSTableInfo i && entries == i.entries && fileBytes == i.fileBytes
        && Arrays.equals(firstRow, i.firstRow) && Arrays.equals(lastRow, i.lastRow) && maxSequence == i.maxSequence
        && minSequence == i.minSequence && tombstones == i.tombstones;
  }

  /** Whether some row in {@code [from, to)} may be in the file ({@code to} empty: no end). */
  public boolean mayHoldRows(byte[] from, byte[] to) {
    return entries > 0 && ByteArrays.compare(lastRow, from) >= 0
        && (to.length == 0 || ByteArrays.compare(firstRow, to) < 0);
  }

  /** Whether {@code row} lies within the file's rows. */
  public boolean mayHoldRow(byte[] row) {
    return entries > 0 && ByteArrays.compare(firstRow, row) <= 0 && ByteArrays.compare(row, lastRow) <= 0;
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(new long[] {entries, fileBytes, maxSequence, minSequence, tombstones})
        + 31 * Arrays.hashCode(firstRow) + 961 * Arrays.hashCode(lastRow);
  }

  @Override
  public String toString() {
    return "SSTableInfo[entries=" + entries + ", fileBytes=" + fileBytes + ", rows=" + ByteArrays.show(firstRow)
        + ".." + ByteArrays.show(lastRow) + ", sequences=" + minSequence + ".." + maxSequence + ", tombstones="
        + tombstones + "]";
  }
}
