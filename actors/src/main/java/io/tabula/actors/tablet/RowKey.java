package io.tabula.actors.tablet;

import java.util.Arrays;

/**
 * A row key as a map key, its bytes' hash computed once (a wrapping ByteBuffer hashes byte
 * by byte on every lookup). The array must not change while the key is in use.
 */
final class RowKey {
  private final byte[] row;
  private final int hash;

  RowKey(byte[] row) {
    this.row = row;
    this.hash = Arrays.hashCode(row);
  }

  /** The row's bytes (not a copy: do not change them). */
  byte[] bytes() {
    return row;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RowKey k && k.hash == hash && Arrays.equals(k.row, row);
  }

  @Override
  public int hashCode() {
    return hash;
  }
}
