package io.tabula.persistence.read;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tabula.persistence.iterator.MergingIterator;
import io.tabula.persistence.memtable.Memtable;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.schema.GcPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The visibility rules on hand-made entries spread over two sources. */
class RowReaderTest {
  private final Memtable newer = new Memtable();
  private final Memtable older = new Memtable();

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private List<Row> read(long snapshot, Function<String, GcPolicy> gc, long now, ReadFilter f) throws IOException {
    MergingIterator m = new MergingIterator(List.of(newer.iterator(), older.iterator()));
    m.seekToFirst();
    try (RowReader r = new RowReader(m, snapshot, gc, now, f)) {
      List<Row> out = new java.util.ArrayList<>();
      for (Row row = r.next(); row != null; row = r.next()) {
        out.add(row);
      }
      return out;
    }
  }

  private List<Row> readAll() throws IOException {
    return read(Long.MAX_VALUE, f -> GcPolicy.KEEP_ALL, 0, ReadFilter.all());
  }

  @Test
  void deletesHideOnlyOlderSequences() throws IOException {
    older.add(CellKey.put(b("r"), b("f"), b("q"), 100, 1), b("old"));
    older.add(CellKey.put(b("r"), b("g"), b("q"), 100, 2), b("g-old"));
    newer.add(CellKey.of(b("r"), b("f"), null, 0, 3, CellKind.DELETE_FAMILY), new byte[0]);
    newer.add(CellKey.put(b("r"), b("f"), b("q"), 50, 4), b("after-delete"));
    assertEquals(List.of(new Row(b("r"), List.of(new Cell("f", b("q"), 50, b("after-delete")),
        new Cell("g", b("q"), 100, b("g-old"))))), readAll());
    newer.add(CellKey.of(b("r"), null, null, 0, 5, CellKind.DELETE_ROW), new byte[0]);
    assertEquals(List.of(), readAll());
  }

  @Test
  void columnRangeDeleteAndSnapshot() throws IOException {
    older.add(CellKey.put(b("r"), b("f"), b("q"), 10, 1), b("a"));
    older.add(CellKey.put(b("r"), b("f"), b("q"), 20, 2), b("b"));
    older.add(CellKey.put(b("r"), b("f"), b("q"), 30, 3), b("c"));
    newer.add(CellKey.of(b("r"), b("f"), b("q"), 0, 4, CellKind.DELETE_COLUMN), Tombstones.encodeRange(15, 30));
    assertEquals(List.of(new Row(b("r"), List.of(new Cell("f", b("q"), 30, b("c")), new Cell("f", b("q"), 10, b("a"))))),
        readAll());
    // At snapshot 3 the delete (sequence 4) is not visible yet.
    assertEquals(3, read(3, f -> GcPolicy.KEEP_ALL, 0, ReadFilter.all()).get(0).cells().size());
  }

  @Test
  void sameTimestampKeepsTheLatestWrite() throws IOException {
    older.add(CellKey.put(b("r"), b("f"), b("q"), 10, 1), b("first"));
    newer.add(CellKey.put(b("r"), b("f"), b("q"), 10, 2), b("second"));
    assertEquals(List.of(new Row(b("r"), List.of(new Cell("f", b("q"), 10, b("second"))))), readAll());
    assertEquals(List.of(new Row(b("r"), List.of(new Cell("f", b("q"), 10, b("first"))))),
        read(1, f -> GcPolicy.KEEP_ALL, 0, ReadFilter.all()));
  }

  @Test
  void gcPoliciesAndFiltersApplyOnRead() throws IOException {
    for (int i = 1; i <= 4; i++) {
      newer.add(CellKey.put(b("r"), b("f"), b("q"), i * 1000L, i), b("v" + i));
    }
    assertEquals(2, read(9, f -> GcPolicy.maxVersions(2), 0, ReadFilter.all()).get(0).cells().size());
    // Versions younger than 2500 µs before now=5000: timestamps 3000 and 4000.
    assertEquals(2, read(9, f -> GcPolicy.maxAgeMicros(2500), 5000, ReadFilter.all()).get(0).cells().size());
    // Dropped family (no policy): never returned.
    assertEquals(List.of(), read(9, f -> null, 0, ReadFilter.all()));
    assertEquals(List.of(new Cell("f", b("q"), 3000, b("v3"))),
        read(9, f -> GcPolicy.KEEP_ALL, 0, ReadFilter.all().withTimestamps(1500, 3500).withMaxVersions(1)).get(0).cells());
    assertEquals(List.of(), read(9, f -> GcPolicy.KEEP_ALL, 0, ReadFilter.all().withFamilies(Set.of("x"))));
  }
}
