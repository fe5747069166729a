package io.tabula.persistence.memtable;

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

  @Test
  void aRowStaysMarkedAfterItsEntryIsTakenOut() {
    Memtable m = new Memtable();
    CellKey k = CellKey.put(row("r"), row("f"), row("q"), 1000, 1);
    m.add(k, new byte[] {1});
    m.remove(k);
    assertTrue(m.mayContainRow(row("r")), "the filter only ever errs towards a seek");
  }
}
