package io.tabula.actors.master;

import io.tabula.protocol.kryo.KryoSerializable;
import io.tabula.persistence.encoding.ByteArrays;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The key visualizer's memory: what each tablet read and wrote, in columns of fixed length
 * (the last {@code columns} of {@code columnMillis} each), and the row range each tablet
 * covered. A {@link #view} of one table lays the columns over row-key bands: the union of the
 * table's tablet boundaries in the window (at most {@value #MAX_BANDS}), so a tablet that
 * split or merged meanwhile still fits, its load spread evenly over the bands it covered.
 *
 * <p>Kept in the master's memory only, not journaled: a new master starts with an empty
 * history. Owned by the master actor's thread.
 */
public final class LoadHistory {
  /** The most bands (heatmap rows) a view has; more boundaries are thinned out. */
  static final int MAX_BANDS = 128;
  /** Rows read, rows written, bytes read, bytes written. */
  static final int METRICS = 4;

  /** One table's recent load by key band and time, the values per second. */
  public record View(String table, long columnMillis, List<Long> columnStarts, List<String> bandStarts,
      List<String> bandEnds, List<String> tablets, float[][] values, int[] tabletAt) implements KryoSerializable {
    /** The value of {@code metric} at column {@code col} and band {@code band}. */
    public float value(int metric, int col, int band) {
      return values[metric][col * bandStarts.size() + band];
    }
  }

  private record Range(String table, byte[] start, byte[] end) {}

  private static final class Column {
    final long start;
    final Map<String, long[]> byTablet = new HashMap<>();

    Column(long start) {
      this.start = start;
    }
  }

  private final long columnMillis;
  private final int columns;
  /** Oldest first; the last is the one filling now. */
  private final ArrayDeque<Column> window = new ArrayDeque<>();
  /** The row range of every tablet a column of the window holds. */
  private final Map<String, Range> ranges = new HashMap<>();

  LoadHistory(long columnMillis, int columns) {
    this.columnMillis = columnMillis;
    this.columns = columns;
  }

  /** Adds a tablet's report, made at {@code nowMillis}, to the column of that time. */
  void add(Directory d, Master.ReportLoad r, long nowMillis) {
    TabletInfo t = d.tablet(r.tabletId());
    if (t == null) {
      return;
    }
    long start = nowMillis - nowMillis % columnMillis;
    if (window.isEmpty() || window.peekLast().start < start) {
      window.addLast(new Column(start));
      while (window.size() > columns) {
        window.pollFirst();
      }
      pruneRanges();
    }
    ranges.putIfAbsent(t.id(), new Range(t.table(), t.startRow(), t.endRow()));
    long[] v = window.peekLast().byTablet.computeIfAbsent(t.id(), k -> new long[METRICS]);
    v[0] += r.reads();
    v[1] += r.writes();
    v[2] += r.bytesRead();
    v[3] += r.bytesWritten();
  }

  private void pruneRanges() {
    Set<String> held = new HashSet<>();
    window.forEach(c -> held.addAll(c.byTablet.keySet()));
    ranges.keySet().retainAll(held);
  }

  /**
   * The recent load of {@code table}, whose tablets are now those of {@code d}, at
   * {@code nowMillis}: the column filling now is divided by the time it has run so far.
   */
  View view(Directory d, String table, long nowMillis) {
    TreeSet<byte[]> bounds = new TreeSet<>(ByteArrays::compare);
    ranges.values().stream().filter(r -> r.table.equals(table)).forEach(r -> bounds.add(r.start));
    d.tabletsOf(table).forEach(t -> bounds.add(t.startRow()));
    bounds.add(new byte[0]);
    List<byte[]> starts = thin(new ArrayList<>(bounds));
    int bands = starts.size();
    List<Column> cols = new ArrayList<>(window);
    float[][] values = new float[METRICS][cols.size() * bands];
    int[] tabletAt = new int[cols.size() * bands];
    java.util.Arrays.fill(tabletAt, -1);
    // The largest share of reads and writes a tablet put in each cell: the hover names that tablet.
    float[] largest = new float[cols.size() * bands];
    List<String> tablets = new ArrayList<>();
    Map<String, Integer> tabletIndex = new HashMap<>();
    for (int c = 0; c < cols.size(); c++) {
      long start = cols.get(c).start;
      float seconds = Math.max(1, Math.min(columnMillis, nowMillis - start)) / 1000f;
      for (Map.Entry<String, long[]> e : cols.get(c).byTablet.entrySet()) {
        Range r = ranges.get(e.getKey());
        if (r == null || !r.table.equals(table)) {
          continue;
        }
        int from = bandOf(starts, r.start);
        int to = r.end.length == 0 ? bands - 1 : Math.max(from, bandOf(starts, r.end) - (isBound(starts, r.end) ? 1 : 0));
        int index = tabletIndex.computeIfAbsent(e.getKey(), k -> {
          tablets.add(k);
          return tablets.size() - 1;
        });
        float share = 1f / (to - from + 1) / seconds;
        for (int b = from; b <= to; b++) {
          int at = c * bands + b;
          for (int m = 0; m < METRICS; m++) {
            values[m][at] += e.getValue()[m] * share;
          }
          float ops = (e.getValue()[0] + e.getValue()[1]) * share;
          if (tabletAt[at] < 0 || ops > largest[at]) {
            tabletAt[at] = index;
            largest[at] = ops;
          }
        }
      }
    }
    List<Long> columnStarts = cols.stream().map(c -> c.start).toList();
    List<String> bandStarts = starts.stream().map(ByteArrays::show).toList();
    List<String> bandEnds = new ArrayList<>(bandStarts.subList(1, bands));
    bandEnds.add("");
    return new View(table, columnMillis, columnStarts, bandStarts, bandEnds, tablets, values, tabletAt);
  }

  /** At most {@link #MAX_BANDS} of the sorted {@code starts}, evenly picked, the first kept. */
  private static List<byte[]> thin(List<byte[]> starts) {
    if (starts.size() <= MAX_BANDS) {
      return starts;
    }
    List<byte[]> out = new ArrayList<>(MAX_BANDS);
    for (int i = 0; i < MAX_BANDS; i++) {
      out.add(starts.get((int) ((long) i * starts.size() / MAX_BANDS)));
    }
    return out;
  }

  /** The band holding row {@code row}: the last whose start is not after it. */
  private static int bandOf(List<byte[]> starts, byte[] row) {
    int lo = 0;
    int hi = starts.size() - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (ByteArrays.compare(starts.get(mid), row) <= 0) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  private static boolean isBound(List<byte[]> starts, byte[] row) {
    return ByteArrays.compare(starts.get(bandOf(starts, row)), row) == 0;
  }
}
