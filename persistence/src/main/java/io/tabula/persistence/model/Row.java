package io.tabula.persistence.model;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.Arrays;
import java.util.List;

/**
 * A row as a read returns it: its key and its visible cells in (family, qualifier,
 * timestamp descending) order. Never empty: a row with no visible cell is not returned.
 */
public record Row(byte[] key, List<Cell> cells) {
  public Row {
    cells = List.copyOf(cells);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Row r && Arrays.equals(key, r.key) && cells.equals(r.cells);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(key) * 31 + cells.hashCode();
  }

  @Override
  public String toString() {
    return ByteArrays.show(key) + cells;
  }
}
