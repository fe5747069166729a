package io.tabula.persistence.schema;

import java.nio.charset.StandardCharsets;

/**
 * A column family: its name, GC policy, the locality group it is stored in, and, for an
 * aggregate family, the {@link Aggregator} that folds the values written to a cell (null for
 * a family of raw values, the usual kind).
 */
public record ColumnFamily(String name, GcPolicy gcPolicy, String localityGroup, Aggregator aggregator) {
  /** A family of raw values. */
  public ColumnFamily(String name, GcPolicy gcPolicy, String localityGroup) {
    this(name, gcPolicy, localityGroup, null);
  }

  public ColumnFamily {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("column family name must not be empty");
    }
    if (name.getBytes(StandardCharsets.UTF_8).length > 64) {
      throw new IllegalArgumentException("column family name " + name + " is longer than 64 bytes");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 0x21 || c > 0x7E || c == ':') {
        throw new IllegalArgumentException("column family name " + name + " must be printable ASCII without ':'");
      }
    }
    if (gcPolicy == null) {
      gcPolicy = GcPolicy.KEEP_ALL;
    }
    if (localityGroup == null) {
      localityGroup = LocalityGroup.DEFAULT_NAME;
    }
  }

  public static ColumnFamily of(String name) {
    return new ColumnFamily(name, GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME);
  }

  public static ColumnFamily of(String name, GcPolicy gc) {
    return new ColumnFamily(name, gc, LocalityGroup.DEFAULT_NAME);
  }
}
