package io.tabula.persistence.memtable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.CellKey;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MemtableTest {
  private static byte[] row(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void everyAddedRowMayBeThereAndMostOthersAreNot() {
    Memtable m = new Memtable();
    assertFalse(m.mayContainRow(row("r0")), "an empty memtable holds no row");
    for (int i = 0; i < 10_000; i++) {
      m.add(CellKey.put(row("r" + i), row("f"), row("q"), 1000, i), new byte[] {1});
    }
    for (int i = 0; i < 10_000; i++) {
      assertTrue(m.mayContainRow(row("r" + i)), "row r" + i + " was added");
    }
    int falsePositives = 0;
    for (int i = 0; i < 10_000; i++) {
      if (m.mayContainRow(row("absent" + i))) {
        falsePositives++;
      }
    }
    // Two bits per row in 2^18: about 0.6% expected for 10,000 rows.
    assertTrue(falsePositives < 300, falsePositives + " of 10,000 absent rows looked present");
  }

  /**
   * A memtable of a few rows keeps a small filter: a node may hold a hundred thousand of them
   * after a bulk load of a row per tablet (32 KiB each was 3.2 GB). Its filter grows once the
   * memtable does, and a row marked in either layer is found.
   */
  @Test
  void aMemtableOfFewRowsKeepsASmallFilter() {
    Memtable m = new Memtable();
    assertEquals(0, m.filterBytes(), "no filter before the first add");
    for (int i = 0; i < 10; i++) {
      m.add(CellKey.put(row("r" + i), row("f"), row("q"), 1000, i), new byte[] {1});
    }
    assertEquals(256, m.filterBytes(), "ten rows: the small layer only");
    for (int c = 0; c < 500; c++) {
      m.add(CellKey.put(row("r0"), row("f"), row("q" + c), 1000, 100 + c), new byte[] {1});
    }
    assertEquals(256, m.filterBytes(), "a row of many cells is one row");
    for (int i = 10; i < 1_000; i++) {
      m.add(CellKey.put(row("r" + i), row("f"), row("q"), 1000, i), new byte[] {1});
    }
    assertEquals(256 + 32 * 1024, m.filterBytes(), "a thousand rows: the large layer too");
    for (int i = 0; i < 1_000; i++) {
      assertTrue(m.mayContainRow(row("r" + i)), "row r" + i + " was added");
    }
  }

  @Test
  void aRowStaysMarkedAfterItsEntryIsTakenOut() {
    Memtable m = new Memtable();
    CellKey k = CellKey.put(row("r"), row("f"), row("q"), 1000, 1);
    m.add(k, new byte[] {1});
    m.remove(k);
    assertTrue(m.mayContainRow(row("r")), "the filter only ever errs towards a seek");
  }
}
