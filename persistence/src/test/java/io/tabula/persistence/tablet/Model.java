package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.fail;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.TableSchema;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The obvious implementation of a Bigtable tablet: rows of cell lists, deletes remove
 * cells, a write of an existing timestamp replaces the cell. It also remembers which
 * cells were ever collectable by their family's GC policy (judged with the highest rank
 * the cell ever had, since a compaction may have judged an older state of the tablet).
 */
final class Model {
  private record MCell(long id, String family, byte[] qualifier, long ts, byte[] value) {}

  private static final Comparator<MCell> ORDER = Comparator.<MCell, byte[]>comparing(
          c -> c.family.getBytes(StandardCharsets.UTF_8), Arrays::compareUnsigned)
      .thenComparing(c -> c.qualifier, Arrays::compareUnsigned)
      .thenComparing(Comparator.comparingLong((MCell c) -> c.ts).reversed());

  private final TableSchema schema;
  private TreeMap<byte[], List<MCell>> rows = new TreeMap<>(Arrays::compareUnsigned);
  private Set<Long> everCollectable = new HashSet<>();
  private Map<Long, Integer> maxRank = new HashMap<>();
  private long nextId;

  Model(TableSchema schema) {
    this.schema = schema;
  }

  Model copy() {
    Model m = new Model(schema);
    rows.forEach((k, v) -> m.rows.put(k, new ArrayList<>(v)));
    m.everCollectable = new HashSet<>(everCollectable);
    m.maxRank = new HashMap<>(maxRank);
    m.nextId = nextId;
    return m;
  }

  void replaceWith(Model o) {
    rows = o.rows;
    everCollectable = o.everCollectable;
    maxRank = o.maxRank;
    nextId = o.nextId;
  }

  void apply(RowMutation rm, long nowMicros) {
    List<MCell> cells = rows.computeIfAbsent(rm.row(), k -> new ArrayList<>());
    for (Mutation m : rm.mutations()) {
      if (m instanceof Mutation.SetCell s) {
        long ts = s.timestamp() == Mutation.SERVER_TIME ? nowMicros / 1000 * 1000 : s.timestamp();
        cells.removeIf(c -> c.family.equals(s.family()) && Arrays.equals(c.qualifier, s.qualifier()) && c.ts == ts);
        cells.add(new MCell(nextId++, s.family(), s.qualifier(), ts, s.value()));
      } else if (m instanceof Mutation.DeleteFromColumn d) {
        cells.removeIf(c -> c.family.equals(d.family()) && Arrays.equals(c.qualifier, d.qualifier())
            && c.ts >= d.startInclusive() && c.ts < d.endExclusive());
      } else if (m instanceof Mutation.DeleteFromFamily f) {
        cells.removeIf(c -> c.family.equals(f.family()));
      } else {
        cells.clear();
      }
    }
    cells.sort(ORDER);
    if (cells.isEmpty()) {
      rows.remove(rm.row());
    }
  }

  /** Notes every cell collectable now, judged by the highest rank it ever had. */
  void markCollectable(long nowMicros) {
    for (List<MCell> cells : rows.values()) {
      forEachColumn(cells, col -> {
        GcPolicy gc = schema.gcPolicy(col.get(0).family);
        for (int i = 0; i < col.size(); i++) {
          MCell c = col.get(i);
          int r = Math.max(i, maxRank.getOrDefault(c.id, 0));
          maxRank.put(c.id, r);
          if (gc.collect(r, c.ts, nowMicros)) {
            everCollectable.add(c.id);
          }
        }
      });
    }
  }

  private static void forEachColumn(List<MCell> cells, java.util.function.Consumer<List<MCell>> f) {
    int i = 0;
    while (i < cells.size()) {
      int j = i + 1;
      while (j < cells.size() && cells.get(j).family.equals(cells.get(i).family)
          && Arrays.equals(cells.get(j).qualifier, cells.get(i).qualifier)) {
        j++;
      }
      f.accept(cells.subList(i, j));
      i = j;
    }
  }

  boolean matches(List<Row> got, ReadFilter f, long now, byte[] from, byte[] to) {
    return problem(got, f, now, from, to) == null;
  }

  void check(byte[] pointRow, List<Row> got, ReadFilter f, long now, byte[] from, byte[] to) {
    String p = problem(got, f, now, from, to);
    if (p != null) {
      fail((pointRow == null ? "scan [" + ByteArrays.show(from) + ", " + ByteArrays.show(to) + ")"
          : "read " + ByteArrays.show(pointRow)) + " with " + f + ": " + p + "\n  got " + got + "\n  model "
          + rows.subMap(from, true, to.length == 0 ? new byte[] {(byte) 0xFF, (byte) 0xFF} : to, false));
    }
  }

  /** What is wrong with {@code got} as the answer to a read of rows [from, to), or null. */
  private String problem(List<Row> got, ReadFilter f, long now, byte[] from, byte[] to) {
    Map<String, Row> byKey = new HashMap<>();
    byte[] prev = null;
    for (Row r : got) {
      if (prev != null && Arrays.compareUnsigned(prev, r.key()) >= 0) {
        return "rows out of order at " + ByteArrays.show(r.key());
      }
      if (Arrays.compareUnsigned(r.key(), from) < 0 || (to.length > 0 && Arrays.compareUnsigned(r.key(), to) >= 0)) {
        return "row " + ByteArrays.show(r.key()) + " is outside the range read";
      }
      if (r.cells().isEmpty()) {
        return "row " + ByteArrays.show(r.key()) + " returned without cells";
      }
      prev = r.key();
      byKey.put(key(r.key()), r);
    }
    for (Map.Entry<byte[], List<MCell>> e : rows.entrySet()) {
      byte[] k = e.getKey();
      if (Arrays.compareUnsigned(k, from) < 0 || (to.length > 0 && Arrays.compareUnsigned(k, to) >= 0)) {
        continue;
      }
      Row r = byKey.remove(key(k));
      String p = rowProblem(e.getValue(), r == null ? List.of() : r.cells(), f, now);
      if (p != null) {
        return "row " + ByteArrays.show(k) + ": " + p;
      }
    }
    if (!byKey.isEmpty()) {
      return "rows the model does not have: " + byKey.keySet();
    }
    return null;
  }

  private static String key(byte[] k) {
    return java.util.HexFormat.of().formatHex(k);
  }

  private String rowProblem(List<MCell> visible, List<Cell> got, ReadFilter f, long now) {
    for (int i = 1; i < got.size(); i++) {
      Cell a = got.get(i - 1);
      Cell b = got.get(i);
      int c = Arrays.compareUnsigned(a.family().getBytes(StandardCharsets.UTF_8), b.family().getBytes(StandardCharsets.UTF_8));
      if (c == 0) {
        c = Arrays.compareUnsigned(a.qualifier(), b.qualifier());
      }
      if (c > 0 || (c == 0 && a.timestamp() <= b.timestamp())) {
        return "cells out of order: " + a + " then " + b;
      }
    }
    List<Cell> remaining = new ArrayList<>(got);
    String[] problem = new String[1];
    forEachColumn(visible, col -> {
      if (problem[0] != null) {
        return;
      }
      MCell first = col.get(0);
      List<Cell> mine = new ArrayList<>();
      remaining.removeIf(c -> {
        if (c.family().equals(first.family) && Arrays.equals(c.qualifier(), first.qualifier)) {
          mine.add(c);
          return true;
        }
        return false;
      });
      problem[0] = columnProblem(col, mine, f, now);
    });
    if (problem[0] != null) {
      return problem[0];
    }
    return remaining.isEmpty() ? null : "cells the model does not have: " + remaining;
  }

  private String columnProblem(List<MCell> col, List<Cell> got, ReadFilter f, long now) {
    MCell first = col.get(0);
    boolean wanted = f.wantsFamily(first.family) && (f.column() == null || f.column().test(first.family, first.qualifier));
    if (!wanted) {
      return got.isEmpty() ? null : "cells of an unwanted column: " + got;
    }
    GcPolicy gc = schema.gcPolicy(first.family);
    List<MCell> mustHave = new ArrayList<>();
    for (int i = 0; i < col.size(); i++) {
      MCell c = col.get(i);
      if (!gc.collect(i, c.ts, now) && !everCollectable.contains(c.id)) {
        mustHave.add(c);
      }
    }
    for (Cell g : got) {
      MCell m = col.stream().filter(c -> c.ts == g.timestamp()).findFirst().orElse(null);
      if (m == null || !Arrays.equals(m.value, g.value())) {
        return "a cell the model does not have: " + g;
      }
      if (g.timestamp() < f.startTimestamp() || g.timestamp() >= f.endTimestamp()) {
        return "a cell outside the timestamp range: " + g;
      }
      long newer = mustHave.stream().filter(c -> c.ts > g.timestamp()).count()
          + got.stream().filter(c -> c.timestamp() > g.timestamp()).count()
          - mustHave.stream().filter(c -> c.ts > g.timestamp() && got.stream().anyMatch(x -> x.timestamp() == c.ts)).count();
      if (gc.collect((int) newer, g.timestamp(), now)) {
        return "a cell its GC policy collects (rank >= " + newer + "): " + g;
      }
    }
    int max = f.maxVersions();
    if (max > 0 && got.size() > max) {
      return got.size() + " versions, more than the " + max + " asked for";
    }
    for (MCell c : mustHave) {
      if (c.ts < f.startTimestamp() || c.ts >= f.endTimestamp()) {
        continue;
      }
      boolean room = max == 0 || got.size() < max || c.ts > got.get(got.size() - 1).timestamp();
      if (room && got.stream().noneMatch(g -> g.timestamp() == c.ts)) {
        return "missing " + c.family + ":" + ByteArrays.show(c.qualifier) + "@" + c.ts;
      }
    }
    return null;
  }
}
