package io.tabula.bench.ycsb;

import com.google.protobuf.ByteString;
import io.tabula.client.Cell;
import io.tabula.client.Filter;
import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

/**
 * How a YCSB record maps onto a Tabula row: the record key is the row key, and each field
 * is one column {@code family:field} holding the field's bytes, written at the server's
 * time and read back newest version only. Stateless.
 */
final class YcsbFields {
  private YcsbFields() {
  }

  /** The cells to read: every column of {@code family}, or only the named fields; newest version each. */
  static Filter filter(String family, Set<String> fields) {
    if (fields == null) {
      return Filter.chain(Filter.family(family), Filter.latest(1));
    }
    List<Filter> columns = new ArrayList<>(fields.size());
    for (String f : fields) {
      columns.add(Filter.column(family, f));
    }
    return Filter.chain(Filter.interleave(columns.toArray(Filter[]::new)), Filter.latest(1));
  }

  /** A scan of at most {@code count} rows from {@code startKey} on, with the cells {@link #filter} passes. */
  static Query scan(String table, String family, String startKey, int count, Set<String> fields) {
    return Query.table(table).range(startKey, "").limit(count).filter(filter(family, fields));
  }

  /** Sets every field of {@code values} in {@code family}, consuming the iterators. */
  static RowMutation mutation(String key, String family, Map<String, ByteIterator> values) {
    RowMutation m = RowMutation.create(key);
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      m.setCell(family, ByteString.copyFromUtf8(e.getKey()), ByteString.copyFrom(e.getValue().toArray()));
    }
    return m;
  }

  /** Puts the newest value of each field of {@code family} in {@code row} into {@code out}, by field name. */
  static void toResult(Row row, String family, Map<String, ByteIterator> out) {
    for (Cell c : row.cells()) {
      if (c.family().equals(family)) {
        out.putIfAbsent(c.qualifierUtf8(), new ByteArrayByteIterator(c.value().toByteArray()));
      }
    }
  }
}
