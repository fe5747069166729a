package io.tabula.persistence.model;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.Arrays;

/**
 * One visible version of a column as a read returns it. Immutable; callers must not modify
 * the arrays.
 */
public record Cell(String family, byte[] qualifier, long timestamp, byte[] value) {
  @Override
  public boolean equals(Object o) {
    return o instanceof Cell c && family.equals(c.family) && Arrays.equals(qualifier, c.qualifier)
        && timestamp == c.timestamp && Arrays.equals(value, c.value);
  }

  @Override
  public int hashCode() {
    return ((family.hashCode() * 31 + Arrays.hashCode(qualifier)) * 31 + Long.hashCode(timestamp)) * 31
        + Arrays.hashCode(value);
  }

  @Override
  public String toString() {
    return family + ":" + ByteArrays.show(qualifier) + "@" + timestamp + "=" + ByteArrays.show(value);
  }
}
