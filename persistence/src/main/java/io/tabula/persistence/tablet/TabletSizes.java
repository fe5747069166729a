package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * How big a tablet is and where to cut it, from a pinned {@link TabletVersion}: memtable
 * sizes, and row samples taken from the SSTables' in-memory block indexes (one per data
 * block: its last row and its stored size). Plain functions; the caller holds the version.
 */
final class TabletSizes {
  private TabletSizes() {}

  /** Bytes in the active and frozen memtables. */
  /** The tablet's sizes over its current version ({@link Tablet#sizes}). */
  static Tablet.Sizes sizes(Tablet t) {
    TabletVersion v = t.acquire();
    try {
      return new Tablet.Sizes(memtableBytes(v), total(rowSamples(v, t::containsRow)));
    } finally {
      v.release();
    }
  }

  /** The tablet's row samples over its current version ({@link Tablet#rowSamples}). */
  static List<Tablet.RowSample> rowSamples(Tablet t) {
    TabletVersion v = t.acquire();
    try {
      return rowSamples(v, t::containsRow);
    } finally {
      v.release();
    }
  }

  /** The tablet's SSTables per locality group, newest first ({@link Tablet#files}). */
  static java.util.Map<String, List<String>> files(Tablet t) {
    java.util.Map<String, List<String>> out = new java.util.HashMap<>();
    TabletVersion v = t.acquire();
    try {
      v.files.forEach((g, l) -> out.put(g, l.stream().map(SSTableHandle::path).toList()));
    } finally {
      v.release();
    }
    return out;
  }

  static long memtableBytes(TabletVersion v) {
    long b = v.active.approximateBytes();
    for (TabletVersion.Frozen f : v.frozen) {
      b += f.memtable().approximateBytes();
    }
    return b;
  }

  /** Block samples of every SSTable, rows kept by {@code inRange}, in row order with cumulative bytes. */
  static List<Tablet.RowSample> rowSamples(TabletVersion v, Predicate<byte[]> inRange) {
    TreeMap<byte[], Long> bytesByRow = new TreeMap<>(ByteArrays::compare);
    for (List<SSTableHandle> l : v.files.values()) {
      for (SSTableHandle h : l) {
        h.reader().forEachBlockSample((row, bytes) -> {
          if (inRange.test(row)) {
            bytesByRow.merge(row, (long) bytes, Long::sum);
          }
        });
      }
    }
    List<Tablet.RowSample> out = new ArrayList<>(bytesByRow.size());
    long total = 0;
    for (Map.Entry<byte[], Long> e : bytesByRow.entrySet()) {
      total += e.getValue();
      out.add(new Tablet.RowSample(e.getKey(), total));
    }
    return out;
  }

  /** The bytes all samples cover: the last sample's cumulative offset. */
  static long total(List<Tablet.RowSample> samples) {
    return samples.isEmpty() ? 0 : samples.get(samples.size() - 1).offsetBytes();
  }

  /** The sample row nearest half the bytes that lies after {@code startRow}, if any. */
  static Optional<byte[]> midRow(List<Tablet.RowSample> samples, byte[] startRow) {
    long half = total(samples) / 2;
    Tablet.RowSample best = null;
    for (Tablet.RowSample s : samples) {
      if (ByteArrays.compare(s.row(), startRow) > 0
          && (best == null || Math.abs(s.offsetBytes() - half) < Math.abs(best.offsetBytes() - half))) {
        best = s;
      }
    }
    return best == null ? Optional.empty() : Optional.of(best.row());
  }
}
