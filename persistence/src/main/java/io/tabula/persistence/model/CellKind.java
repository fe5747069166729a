package io.tabula.persistence.model;

/**
 * What an entry in a memtable or SSTable is. The codes are stored on disk (SSTable keys,
 * commit-log records): never renumber, never reuse a retired code.
 */
public enum CellKind {
  /** A value at (row, family, qualifier, timestamp). */
  PUT(1),
  /** Deletes the versions of one column whose timestamp is in a range; the range is the entry's value. */
  DELETE_COLUMN(2),
  /** Deletes every cell of one family in the row. */
  DELETE_FAMILY(3),
  /** Deletes every cell of the row. */
  DELETE_ROW(4);

  private final int code;

  CellKind(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  public boolean isTombstone() {
    return this != PUT;
  }

  /** The kind stored under {@code code}; null if the code is unknown (the caller reports corruption). */
  public static CellKind fromCode(int code) {
    return switch (code) {
      case 1 -> PUT;
      case 2 -> DELETE_COLUMN;
      case 3 -> DELETE_FAMILY;
      case 4 -> DELETE_ROW;
      default -> null;
    };
  }
}
