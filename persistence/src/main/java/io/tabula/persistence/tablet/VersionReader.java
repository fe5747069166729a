package io.tabula.persistence.tablet;

import io.tabula.persistence.cache.ScanCache;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.iterator.MergingIterator;
import io.tabula.persistence.iterator.RangeIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.read.RowReader;
import io.tabula.persistence.schema.TableSchema;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * How a read of a tablet is put together over one pinned {@link TabletVersion}: the active
 * and frozen memtables and the SSTables of the locality groups the filter needs, each left
 * out when it cannot hold the rows read, merged, clipped to the range and read row by row
 * at a snapshot. Stateless; the caller pins the version for as long as the reader lives.
 */
final class VersionReader {
  private VersionReader() {}

  /**
   * A reader over the rows {@code [from, to)} of {@code v} as of {@code snapshot};
   * {@code pointRow}, for a read of one row, lets blooms and row ranges leave files out, and
   * takes the row's entries in each file from {@code scanCache} when there is one.
   */
  static RowReader rows(TabletVersion v, TableSchema schema, long snapshot, byte[] from, byte[] to, ReadFilter filter,
      byte[] pointRow, long nowMicros, ScanCache scanCache) throws IOException {
    Set<String> groups = new TreeSet<>();
    if (filter.families() == null) {
      groups.addAll(v.files.keySet());
    } else {
      filter.families().forEach(f -> groups.add(schema.groupOf(f)));
    }
    List<CellIterator> its = new ArrayList<>();
    if (pointRow == null || v.active.mayContainRow(pointRow)) {
      its.add(v.active.iterator());
    }
    for (TabletVersion.Frozen f : v.frozen) {
      if (pointRow == null || f.memtable().mayContainRow(pointRow)) {
        its.add(f.memtable().iterator());
      }
    }
    for (String g : groups) {
      for (SSTableHandle h : v.files(g)) {
        // Files whose rows lie outside the read are left out (mayContainRow checks the row
        // range too): after a load in key order a tablet holds side-by-side files that no
        // merge has joined (see CompactionPicker).
        boolean wanted = pointRow == null ? h.reader().info().mayHoldRows(from, to)
            : h.reader().mayContainRow(pointRow);
        if (wanted) {
          long id = h.reader().scanCacheId();
          its.add(pointRow != null && scanCache != null && id != 0
              ? scanCache.row(id, pointRow, h.reader()::iterator) : h.reader().iterator());
        }
      }
    }
    CellIterator merged = new RangeIterator(new MergingIterator(its), from, to);
    merged.seek(CellKey.firstOfRow(from));
    return new RowReader(merged, snapshot, schema::gcPolicy, schema::aggregator, nowMicros, filter);
  }
}
