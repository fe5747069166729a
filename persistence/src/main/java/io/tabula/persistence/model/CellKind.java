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
  DELETE_ROW(4),
  /**
   * An operand of a cell of an aggregate family: folded with the family's {@link
   * io.tabula.persistence.schema.Aggregator} into the other operands of its (row, family,
   * qualifier, timestamp) that no delete hides, instead of replacing them.
   */
  MERGE(5),
  /**
   * An idempotency token of a row mutation (Cloud Bigtable's {@code Idempotency}): empty family,
   * the token as qualifier, the server time it was written at as timestamp. Never read as a
   * cell; kept by compactions for {@code TabletTokens#WINDOW_MICROS}, so a retry of the row
   * mutation finds it and is not applied twice.
   */
  TOKEN(6);

  private final int code;

  CellKind(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** Whether the entry is a cell's value or part of one (a PUT or a MERGE operand). */
  public boolean isCell() {
    return this == PUT || this == MERGE;
  }

  public boolean isTombstone() {
    return this == DELETE_COLUMN || this == DELETE_FAMILY || this == DELETE_ROW;
  }

  /** The kind stored under {@code code}; null if the code is unknown (the caller reports corruption). */
  public static CellKind fromCode(int code) {
    return switch (code) {
      case 1 -> PUT;
      case 2 -> DELETE_COLUMN;
      case 3 -> DELETE_FAMILY;
      case 4 -> DELETE_ROW;
      case 5 -> MERGE;
      case 6 -> TOKEN;
      default -> null;
    };
  }
}
