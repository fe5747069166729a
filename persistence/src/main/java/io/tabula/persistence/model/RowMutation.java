package io.tabula.persistence.model;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.List;

/**
 * The mutations of one row, applied atomically and in order (a later mutation in the list
 * sees the effect of an earlier one). Validated on construction: see {@link
 * InvalidMutationException} for what is refused.
 */
public record RowMutation(byte[] row, List<Mutation> mutations) {
  /** Largest row key, as in Bigtable: 64 KiB. */
  public static final int MAX_ROW_KEY_BYTES = 64 * 1024;
  /** Largest qualifier accepted (Cloud Bigtable: 16 KiB). */
  public static final int MAX_QUALIFIER_BYTES = 16 * 1024;
  /** Largest family name. */
  public static final int MAX_FAMILY_BYTES = 64;
  /** Largest value in one cell (Cloud Bigtable: 100 MiB). */
  public static final int MAX_VALUE_BYTES = 100 * 1024 * 1024;

  public RowMutation {
    if (row == null || row.length == 0) {
      throw new InvalidMutationException("row_key", "must not be empty");
    }
    if (row.length > MAX_ROW_KEY_BYTES) {
      throw new InvalidMutationException("row_key", "is " + row.length + " bytes, over the limit of "
          + MAX_ROW_KEY_BYTES);
    }
    if (mutations == null || mutations.isEmpty()) {
      throw new InvalidMutationException("mutations", "must hold at least one mutation");
    }
    mutations = List.copyOf(mutations);
    for (int i = 0; i < mutations.size(); i++) {
      validate(i, mutations.get(i));
    }
  }

  public static RowMutation of(byte[] row, Mutation... mutations) {
    return new RowMutation(row, List.of(mutations));
  }

  private static void validate(int i, Mutation m) {
    String at = "mutations[" + i + "]";
    String family = m.familyOrNull();
    if (m instanceof Mutation.DeleteFromRow) {
      return;
    }
    if (m instanceof Mutation.Token t) {
      if (t.token() == null || t.token().length < Mutation.Token.MIN_BYTES
          || t.token().length > Mutation.Token.MAX_BYTES) {
        throw new InvalidMutationException("idempotency.token", "is " + (t.token() == null ? "missing"
            : t.token().length + " bytes") + "; a token is " + Mutation.Token.MIN_BYTES + " to "
            + Mutation.Token.MAX_BYTES + " bytes");
      }
      return;
    }
    if (family == null || family.isEmpty()) {
      throw new InvalidMutationException(at + ".family_name", "must not be empty");
    }
    if (family.length() * 3 > MAX_FAMILY_BYTES && ByteArrays.utf8(family).length > MAX_FAMILY_BYTES) {
      throw new InvalidMutationException(at + ".family_name", "is longer than " + MAX_FAMILY_BYTES + " bytes");
    }
    if (m instanceof Mutation.SetCell s) {
      requireQualifier(at, s.qualifier());
      if (s.timestamp() < 0 && s.timestamp() != Mutation.SERVER_TIME) {
        throw new InvalidMutationException(at + ".timestamp_micros", "is " + s.timestamp()
            + "; must be >= 0, or -1 for server time");
      }
      if (s.value() == null) {
        throw new InvalidMutationException(at + ".value", "must not be null");
      }
      if (s.value().length > MAX_VALUE_BYTES) {
        throw new InvalidMutationException(at + ".value", "is " + s.value().length + " bytes, over the limit of "
            + MAX_VALUE_BYTES);
      }
    } else if (m instanceof Mutation.AddToCell a) {
      requireQualifier(at, a.qualifier());
      requireAggregateTimestamp(at, a.timestamp());
    } else if (m instanceof Mutation.MergeToCell mc) {
      requireQualifier(at, mc.qualifier());
      requireAggregateTimestamp(at, mc.timestamp());
      if (mc.state() != null && mc.state().length > MAX_VALUE_BYTES) {
        throw new InvalidMutationException(at + ".merge_to_cell.input", "is " + mc.state().length
            + " bytes, over the limit of "
            + MAX_VALUE_BYTES);
      }
    } else if (m instanceof Mutation.DeleteFromColumn d) {
      requireQualifier(at, d.qualifier());
      if (d.startInclusive() < 0 || d.endExclusive() <= d.startInclusive()) {
        throw new InvalidMutationException(at + ".time_range", "[" + d.startInclusive() + ", "
            + d.endExclusive() + ") is not a non-empty range of non-negative timestamps");
      }
    }
  }

  /** An aggregate cell's timestamp: set by the writer (there is no server time for it), never negative. */
  private static void requireAggregateTimestamp(String at, long timestamp) {
    if (timestamp < 0) {
      throw new InvalidMutationException(at + ".timestamp", "is " + timestamp + "; must be >= 0");
    }
  }

  private static void requireQualifier(String at, byte[] qualifier) {
    if (qualifier == null) {
      throw new InvalidMutationException(at + ".column_qualifier", "must not be null");
    }
    if (qualifier.length > MAX_QUALIFIER_BYTES) {
      throw new InvalidMutationException(at + ".column_qualifier", "is " + qualifier.length
          + " bytes, over the limit of " + MAX_QUALIFIER_BYTES);
    }
  }
}
