package io.tabula.persistence.sstable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.storage.FileStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bloom filter answers yes for everything written, and rarely for anything else. */
class SSTableBloomTest {
  private static final int ROWS = 20_000;
  private static final int PROBES = 100_000;

  @TempDir
  Path dir;

  private static byte[] row(int i) {
    return ByteArrays.utf8(String.format("user%08d", i));
  }

  private SSTableReader writeRows(FileStorage storage, int bitsPerKey) throws IOException {
    NavigableMap<CellKey, byte[]> model = new TreeMap<>(CellKey.ORDER);
    for (int i = 0; i < ROWS; i++) {
      // Even rows only, so odd rows inside the row range are certainly absent.
      byte[] row = row(2 * i);
      model.put(CellKey.put(row, ByteArrays.utf8("cf"), ByteArrays.utf8("q" + (i % 7)), 100, i + 1), row);
    }
    String path = "bloom-" + bitsPerKey + ".sst";
    TestTables.write(storage, path, SSTableOptions.defaults().withBloomBitsPerKey(bitsPerKey), model);
    return SSTableReader.open(storage.open(path), null, false);
  }

  @Test
  void everyWrittenRowAndColumnIsFoundAndAbsentOnesRarely() throws IOException {
    FileStorage storage = new FileStorage(dir);
    try (SSTableReader r = writeRows(storage, 10)) {
      for (int i = 0; i < ROWS; i++) {
        assertTrue(r.mayContainRow(row(2 * i)));
        assertTrue(r.mayContainColumn(row(2 * i), ByteArrays.utf8("cf"), ByteArrays.utf8("q" + (i % 7))));
      }
      int rowFalsePositives = 0;
      int columnFalsePositives = 0;
      for (int i = 0; i < PROBES; i++) {
        byte[] absent = row(2 * (i % ROWS) + 1);
        if (r.mayContainRow(absent)) {
          rowFalsePositives++;
        }
        // Present row, absent column.
        if (r.mayContainColumn(row(2 * (i % ROWS)), ByteArrays.utf8("cf"), ByteArrays.utf8("x" + i))) {
          columnFalsePositives++;
        }
      }
      double rowRate = (double) rowFalsePositives / PROBES;
      double columnRate = (double) columnFalsePositives / PROBES;
      System.out.printf("bloom false positives at 10 bits/key: rows %.4f, columns %.4f%n", rowRate, columnRate);
      assertTrue(rowRate < 0.02, "row false-positive rate " + rowRate);
      assertTrue(columnRate < 0.02, "column false-positive rate " + columnRate);
    }
  }

  @Test
  void rowsOutsideTheFileRangeAreRejectedWithoutTheFilter() throws IOException {
    FileStorage storage = new FileStorage(dir);
    try (SSTableReader r = writeRows(storage, 0)) {
      assertTrue(r.mayContainRow(row(3)));
      assertEquals(false, r.mayContainRow(ByteArrays.utf8("a")));
      assertEquals(false, r.mayContainRow(ByteArrays.utf8("z")));
    }
  }

  @Test
  void tombstonesOfRowOrFamilyMakeEveryColumnOfThemAMaybe() throws IOException {
    FileStorage storage = new FileStorage(dir);
    NavigableMap<CellKey, byte[]> model = new TreeMap<>(CellKey.ORDER);
    byte[] f = ByteArrays.utf8("cf");
    model.put(CellKey.of(ByteArrays.utf8("r1"), ByteArrays.EMPTY, ByteArrays.EMPTY, 0, 5, CellKind.DELETE_ROW),
        ByteArrays.EMPTY);
    model.put(CellKey.of(ByteArrays.utf8("r2"), f, ByteArrays.EMPTY, 0, 6, CellKind.DELETE_FAMILY), ByteArrays.EMPTY);
    model.put(CellKey.of(ByteArrays.utf8("r3"), f, ByteArrays.utf8("c"), 0, 7, CellKind.DELETE_COLUMN),
        new byte[16]);
    for (int i = 0; i < 1000; i++) {
      model.put(CellKey.put(ByteArrays.utf8("r4/" + i), f, ByteArrays.utf8("c"), 1, 1), ByteArrays.utf8("v"));
    }
    TestTables.write(storage, "tomb.sst", SSTableOptions.defaults(), model);
    try (SSTableReader r = SSTableReader.open(storage.open("tomb.sst"), null, false)) {
      for (int i = 0; i < 200; i++) {
        byte[] q = ByteArrays.utf8("any" + i);
        assertTrue(r.mayContainColumn(ByteArrays.utf8("r1"), ByteArrays.utf8("fam" + i), q));
        assertTrue(r.mayContainColumn(ByteArrays.utf8("r2"), f, q));
      }
      assertTrue(r.mayContainColumn(ByteArrays.utf8("r3"), f, ByteArrays.utf8("c")));
      assertTrue(r.mayContainRow(ByteArrays.utf8("r1")));
      assertTrue(r.mayContainRow(ByteArrays.utf8("r2")));
    }
  }
}
