package io.tabula.persistence.iterator;

import io.tabula.persistence.model.CellKey;
import java.io.IOException;
import java.util.Arrays;

/**
 * Restricts a {@link CellIterator} to the rows {@code [startRow, endRow)}: how a tablet
 * reads an SSTable it shares with a sibling after a split (paper §6 "Exploiting
 * immutability"), and how a scan is bounded. An empty start means unbounded below, a null
 * or empty end unbounded above.
 *
 * <p>Owns the wrapped iterator. Not thread-safe.
 */
public final class RangeIterator implements CellIterator {
  private final CellIterator in;
  private final byte[] startRow;
  private final byte[] endRow;

  public RangeIterator(CellIterator in, byte[] startRow, byte[] endRow) {
    this.in = in;
    this.startRow = startRow == null ? new byte[0] : startRow;
    this.endRow = endRow == null || endRow.length == 0 ? null : endRow;
  }

  @Override
  public void seek(CellKey target) throws IOException {
    if (Arrays.compareUnsigned(target.row(), startRow) < 0) {
      in.seek(CellKey.firstOfRow(startRow));
    } else {
      in.seek(target);
    }
  }

  @Override
  public void seekToFirst() throws IOException {
    if (startRow.length == 0) {
      in.seekToFirst();
    } else {
      in.seek(CellKey.firstOfRow(startRow));
    }
  }

  @Override
  public boolean valid() {
    return in.valid() && (endRow == null || Arrays.compareUnsigned(in.key().row(), endRow) < 0);
  }

  @Override
  public void next() throws IOException {
    in.next();
  }

  @Override
  public CellKey key() {
    return in.key();
  }

  @Override
  public byte[] value() {
    return in.value();
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
