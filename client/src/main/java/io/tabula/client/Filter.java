package io.tabula.client;

import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.TimestampRange;
import com.google.protobuf.ByteString;
import java.util.List;
import java.util.Objects;

/**
 * A row filter in the Cloud Bigtable v2 form, built from static factories and combined
 * with {@link #chain} (each filter sees what the one before passed) and {@link #interleave}
 * (the union of what each passes). Regular expressions are RE2 over the raw bytes and
 * must match the whole family, qualifier, value or key; {@link #quote} makes one that
 * matches exactly the given bytes. Immutable.
 */
public final class Filter {
  private final RowFilter proto;

  private Filter(RowFilter proto) {
    this.proto = proto;
  }

  /** A filter given in the wire form, for anything the factories here do not cover. */
  public static Filter of(RowFilter proto) {
    return new Filter(Objects.requireNonNull(proto, "filter"));
  }

  public static Filter pass() {
    return new Filter(RowFilter.newBuilder().setPassAllFilter(true).build());
  }

  public static Filter block() {
    return new Filter(RowFilter.newBuilder().setBlockAllFilter(true).build());
  }

  public static Filter rowKeyRegex(String regex) {
    return new Filter(RowFilter.newBuilder().setRowKeyRegexFilter(Bytes.of(regex, "regex")).build());
  }

  public static Filter familyRegex(String regex) {
    return new Filter(RowFilter.newBuilder().setFamilyNameRegexFilter(Objects.requireNonNull(regex, "regex")).build());
  }

  /** Cells of exactly this family. */
  public static Filter family(String family) {
    return familyRegex(quote(Bytes.of(Bytes.family(family), "family")).toStringUtf8());
  }

  public static Filter qualifierRegex(String regex) {
    return new Filter(RowFilter.newBuilder().setColumnQualifierRegexFilter(Bytes.of(regex, "regex")).build());
  }

  /** Cells of exactly this column. */
  public static Filter column(String family, String qualifier) {
    return chain(family(family), new Filter(RowFilter.newBuilder()
        .setColumnQualifierRegexFilter(quote(Bytes.of(qualifier, "qualifier"))).build()));
  }

  public static Filter valueRegex(String regex) {
    return new Filter(RowFilter.newBuilder().setValueRegexFilter(Bytes.of(regex, "regex")).build());
  }

  /** Cells whose value is exactly {@code value}. */
  public static Filter valueEquals(ByteString value) {
    return new Filter(RowFilter.newBuilder().setValueRegexFilter(quote(value)).build());
  }

  /** Cells with timestamps in [fromMicros, toMicros); a {@code toMicros} of 0 means no upper bound. */
  public static Filter timestamps(long fromMicros, long toMicros) {
    return new Filter(RowFilter.newBuilder().setTimestampRangeFilter(TimestampRange.newBuilder()
        .setStartTimestampMicros(fromMicros).setEndTimestampMicros(toMicros)).build());
  }

  /** The newest {@code n} versions of each column. */
  public static Filter latest(int n) {
    return new Filter(RowFilter.newBuilder().setCellsPerColumnLimitFilter(n).build());
  }

  /** The first {@code n} cells of each row. */
  public static Filter cellsPerRow(int n) {
    return new Filter(RowFilter.newBuilder().setCellsPerRowLimitFilter(n).build());
  }

  /** Cells with their values replaced by empty ones (keys and columns only). */
  public static Filter stripValue() {
    return new Filter(RowFilter.newBuilder().setStripValueTransformer(true).build());
  }

  /** Labels every cell passed with {@code label}; a read returns it in {@link Cell#labels}. */
  public static Filter label(String label) {
    return new Filter(RowFilter.newBuilder().setApplyLabelTransformer(Objects.requireNonNull(label, "label")).build());
  }

  public static Filter chain(Filter... filters) {
    if (filters.length == 1) {
      return filters[0];
    }
    RowFilter.Chain.Builder b = RowFilter.Chain.newBuilder();
    for (Filter f : filters) {
      b.addFilters(f.proto);
    }
    return new Filter(RowFilter.newBuilder().setChain(b).build());
  }

  public static Filter interleave(Filter... filters) {
    if (filters.length == 1) {
      return filters[0];
    }
    RowFilter.Interleave.Builder b = RowFilter.Interleave.newBuilder();
    for (Filter f : filters) {
      b.addFilters(f.proto);
    }
    return new Filter(RowFilter.newBuilder().setInterleave(b).build());
  }

  /** For each row: if {@code predicate} passes any cell, {@code onMatch}, else {@code otherwise}. */
  public static Filter condition(Filter predicate, Filter onMatch, Filter otherwise) {
    return new Filter(RowFilter.newBuilder().setCondition(RowFilter.Condition.newBuilder()
        .setPredicateFilter(predicate.proto).setTrueFilter(onMatch.proto).setFalseFilter(otherwise.proto)).build());
  }

  static Filter chain(List<Filter> filters) {
    return filters.isEmpty() ? pass() : chain(filters.toArray(Filter[]::new));
  }

  static Filter interleave(List<Filter> filters) {
    return interleave(filters.toArray(Filter[]::new));
  }

  /**
   * An RE2 pattern matching exactly {@code bytes}: letters, digits and '_' as they are,
   * other printable ASCII escaped with a backslash, every other byte as {@code \xHH}.
   */
  public static ByteString quote(ByteString bytes) {
    StringBuilder s = new StringBuilder(bytes.size() * 2);
    for (int i = 0; i < bytes.size(); i++) {
      int b = bytes.byteAt(i) & 0xff;
      if (Character.isLetterOrDigit(b) && b < 0x80 || b == '_') {
        s.append((char) b);
      } else if (b >= 0x20 && b < 0x7f) {
        s.append('\\').append((char) b);
      } else {
        s.append(String.format("\\x%02x", b));
      }
    }
    return ByteString.copyFromUtf8(s.toString());
  }

  /** The filter in the Cloud Bigtable v2 wire form. */
  public RowFilter toProto() {
    return proto;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Filter f && proto.equals(f.proto);
  }

  @Override
  public int hashCode() {
    return proto.hashCode();
  }

  @Override
  public String toString() {
    return proto.toString();
  }
}
