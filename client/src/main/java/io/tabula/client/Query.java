package io.tabula.client;

import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A read of one table, built fluently and compiled to a Cloud Bigtable {@code ReadRowsRequest}:
 * which rows (keys, ranges and prefixes, united; none given means every row), which cells
 * (families or columns, a qualifier regex, a timestamp range, the newest n versions, any
 * further {@link Filter}), how many rows at most, and in which direction.
 * <pre>{@code
 * Query q = Query.table("webtable").prefix("com.cnn.").families("anchor").versions(1).limit(100);
 * }</pre>
 * Not thread-safe while being built; a built query may be read from any thread.
 */
public final class Query {
  private final String table;
  private final RowSet.Builder rows = RowSet.newBuilder();
  /** Families asked for whole, and the columns asked for in other families: no cell is in two. */
  private final Set<String> families = new LinkedHashSet<>();
  private final Map<String, Set<ByteString>> columns = new LinkedHashMap<>();
  private Filter qualifier;
  private Filter timestamps;
  private Filter extra;
  private int versions;
  private long limit;
  private boolean reversed;

  private Query(String table) {
    this.table = Objects.requireNonNull(table, "table");
    if (table.isEmpty()) {
      throw new IllegalArgumentException("table must not be empty");
    }
  }

  public static Query table(String table) {
    return new Query(table);
  }

  public String tableId() {
    return table;
  }

  public Query rowKey(String key) {
    return rowKey(Bytes.of(key, "key"));
  }

  public Query rowKey(ByteString key) {
    rows.addRowKeys(Bytes.key(key));
    return this;
  }

  public Query rowKeys(String... keys) {
    for (String k : keys) {
      rowKey(k);
    }
    return this;
  }

  /** Rows in [start, end); an empty start is the first row, an empty end the last. */
  public Query range(String start, String end) {
    return range(Bytes.of(start, "start"), Bytes.of(end, "end"));
  }

  public Query range(ByteString start, ByteString end) {
    if (!end.isEmpty() && Bytes.compare(start, end) >= 0) {
      throw new IllegalArgumentException("range [" + start.toStringUtf8() + ", " + end.toStringUtf8() + ") is empty");
    }
    rows.addRowRanges(RowRange.newBuilder().setStartKeyClosed(start).setEndKeyOpen(end));
    return this;
  }

  /** Rows whose keys start with {@code prefix}. */
  public Query prefix(String prefix) {
    return prefix(Bytes.of(prefix, "prefix"));
  }

  public Query prefix(ByteString prefix) {
    if (prefix.isEmpty()) {
      throw new IllegalArgumentException("prefix must not be empty (leave it out to read every row)");
    }
    rows.addRowRanges(RowRange.newBuilder().setStartKeyClosed(prefix).setEndKeyOpen(Bytes.prefixEnd(prefix)));
    return this;
  }

  /** Only cells of these families (added to any columns asked for). */
  public Query families(String... families) {
    for (String f : families) {
      this.families.add(Bytes.family(f));
      columns.remove(f);
    }
    return this;
  }

  /** Only cells of this column (added to any families or columns asked for). */
  public Query column(String family, String qualifier) {
    ByteString q = Bytes.of(qualifier, "qualifier");
    if (!families.contains(Bytes.family(family))) {
      columns.computeIfAbsent(family, f -> new LinkedHashSet<>()).add(q);
    }
    return this;
  }

  /** Only cells whose qualifier matches {@code regex} (RE2, whole qualifier). */
  public Query qualifierRegex(String regex) {
    this.qualifier = Filter.qualifierRegex(regex);
    return this;
  }

  /** Only cells with timestamps in [fromMicros, toMicros); 0 as {@code toMicros} means no upper bound. */
  public Query timeRange(long fromMicros, long toMicros) {
    if (fromMicros < 0 || toMicros < 0 || toMicros != 0 && toMicros <= fromMicros) {
      throw new IllegalArgumentException("time range [" + fromMicros + ", " + toMicros + ") is empty or negative");
    }
    this.timestamps = Filter.timestamps(fromMicros, toMicros);
    return this;
  }

  /** Only the newest {@code n} versions of each column. */
  public Query versions(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("versions must be at least 1, was " + n);
    }
    this.versions = n;
    return this;
  }

  /** At most {@code n} rows. */
  public Query limit(long n) {
    if (n < 1) {
      throw new IllegalArgumentException("limit must be at least 1, was " + n);
    }
    this.limit = n;
    return this;
  }

  /** Rows in descending key order. */
  public Query reversed() {
    this.reversed = true;
    return this;
  }

  /** A further filter, applied after the families, qualifier and timestamps and before versions. */
  public Query filter(Filter filter) {
    this.extra = Objects.requireNonNull(filter, "filter");
    return this;
  }

  public long limit() {
    return limit;
  }

  public boolean isReversed() {
    return reversed;
  }

  /** The rows asked for; an empty set means every row. */
  public RowSet rowSet() {
    return rows.build();
  }

  /** The cell filter the query compiles to, or null if it passes every cell. */
  public Filter compiledFilter() {
    List<Filter> chain = new ArrayList<>();
    if (!families.isEmpty() || !columns.isEmpty()) {
      chain.add(columnFilter());
    }
    if (qualifier != null) {
      chain.add(qualifier);
    }
    if (timestamps != null) {
      chain.add(timestamps);
    }
    if (extra != null) {
      chain.add(extra);
    }
    if (versions > 0) {
      chain.add(Filter.latest(versions));
    }
    return chain.isEmpty() ? null : Filter.chain(chain);
  }

  /**
   * The families and columns asked for as one filter that passes each cell at most once: an
   * interleave passes a cell once for every branch that passes it, so each family is in one
   * branch only (the whole families in one regex, each other family with its qualifiers).
   */
  private Filter columnFilter() {
    List<Filter> branches = new ArrayList<>();
    if (!families.isEmpty()) {
      branches.add(Filter.familyRegex(alternatives(families.stream().map(ByteString::copyFromUtf8).toList())
          .toStringUtf8()));
    }
    columns.forEach((family, qualifiers) -> branches.add(Filter.chain(Filter.family(family),
        Filter.of(RowFilter.newBuilder().setColumnQualifierRegexFilter(alternatives(qualifiers)).build()))));
    return Filter.interleave(branches);
  }

  /** A regex matching exactly one of {@code values}. */
  private static ByteString alternatives(Collection<ByteString> values) {
    ByteString out = ByteString.EMPTY;
    for (ByteString v : values) {
      out = out.isEmpty() ? Filter.quote(v) : out.concat(ByteString.copyFromUtf8("|")).concat(Filter.quote(v));
    }
    return out;
  }

  /** The request for {@code tableName} (the full projects/../tables/.. name). */
  public ReadRowsRequest toRequest(String tableName) {
    ReadRowsRequest.Builder b = ReadRowsRequest.newBuilder().setTableName(tableName).setRows(rows.build())
        .setRowsLimit(limit).setReversed(reversed);
    Filter f = compiledFilter();
    if (f != null) {
      b.setFilter(f.toProto());
    }
    return b.build();
  }
}
