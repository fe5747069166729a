package io.tabula.persistence.model;

import io.tabula.persistence.encoding.ByteArrays;

/**
 * One change inside a {@link RowMutation}. Timestamps are microseconds since the epoch.
 * Validation of ranges and lengths happens in {@link RowMutation}'s constructor.
 */
public sealed interface Mutation {
  /** Timestamp meaning "the server assigns the current time" (Cloud Bigtable's -1). */
  long SERVER_TIME = -1;

  /** Sets the value of (family, qualifier) at {@code timestamp} (or {@link #SERVER_TIME}). */
  record SetCell(String family, byte[] qualifier, long timestamp, byte[] value) implements Mutation {
    @Override
    public String toString() {
      return "Set(" + family + ":" + ByteArrays.show(qualifier) + "@" + timestamp + "=" + ByteArrays.show(value) + ")";
    }
  }

  /**
   * Deletes the versions of one column with {@code startInclusive <= timestamp < endExclusive};
   * {@link #ALL_VERSIONS} deletes every version.
   */
  record DeleteFromColumn(String family, byte[] qualifier, long startInclusive, long endExclusive)
      implements Mutation {
    public static final long ALL_VERSIONS_END = Long.MAX_VALUE;

    @Override
    public String toString() {
      return "DeleteColumn(" + family + ":" + ByteArrays.show(qualifier) + " [" + startInclusive + ", "
          + endExclusive + "))";
    }

    public static DeleteFromColumn allVersions(String family, byte[] qualifier) {
      return new DeleteFromColumn(family, qualifier, 0, ALL_VERSIONS_END);
    }
  }

  /**
   * Adds {@code input} to the cell (family, qualifier, timestamp) of an aggregate family
   * (Cloud Bigtable's {@code AddToCell}); the tablet turns it into the {@link MergeToCell}
   * of the family's operand for the input before it logs it.
   */
  record AddToCell(String family, byte[] qualifier, long timestamp, long input) implements Mutation {
    @Override
    public String toString() {
      return "Add(" + family + ":" + ByteArrays.show(qualifier) + "@" + timestamp + "+=" + input + ")";
    }
  }

  /**
   * Merges {@code state} into the cell (family, qualifier, timestamp) of an aggregate family
   * (Cloud Bigtable's {@code MergeToCell}; see {@link io.tabula.persistence.schema.Aggregator}).
   * A null state (the API's NULL input) has no effect: the tablet leaves it out.
   */
  record MergeToCell(String family, byte[] qualifier, long timestamp, byte[] state) implements Mutation {
    @Override
    public String toString() {
      return "Merge(" + family + ":" + ByteArrays.show(qualifier) + "@" + timestamp + "<-"
          + (state == null ? "NULL" : ByteArrays.show(state)) + ")";
    }
  }

  /**
   * The idempotency token of the row mutation it is part of (Cloud Bigtable's {@code
   * Idempotency.token}); {@code timestamp} is when the tablet wrote it ({@link #SERVER_TIME}
   * until then). A tablet that has the token in the row does not apply the row mutation again
   * ({@code TabletTokens}).
   */
  record Token(byte[] token, long timestamp) implements Mutation {
    public static final int MIN_BYTES = 8;
    public static final int MAX_BYTES = 1024;

    @Override
    public String toString() {
      return "Token(" + ByteArrays.show(token) + "@" + timestamp + ")";
    }
  }

  /** Deletes every cell of a family in the row. */
  record DeleteFromFamily(String family) implements Mutation {}

  /** Deletes every cell of the row. */
  enum DeleteFromRow implements Mutation {
    INSTANCE
  }

  /** The family this mutation touches, or null for a whole-row delete. */
  default String familyOrNull() {
    if (this instanceof SetCell s) {
      return s.family();
    } else if (this instanceof DeleteFromColumn d) {
      return d.family();
    } else if (this instanceof DeleteFromFamily f) {
      return f.family();
    } else if (this instanceof AddToCell a) {
      return a.family();
    } else if (this instanceof MergeToCell m) {
      return m.family();
    }
    return null;
  }
}
