package io.tabula.persistence.sstable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Checked-in SSTables pin the format: today's reader must read them, and today's writer
 * must produce them byte for byte. A failure here means the format changed; if that was
 * meant, bump the format version, keep reading the old one, and regenerate with {@link
 * GoldenSSTables#main}.
 */
class SSTableGoldenTest {
  @TempDir
  Path dir;

  private static byte[] golden(Compression c) throws IOException {
    try (InputStream in = SSTableGoldenTest.class.getResourceAsStream(GoldenSSTables.RESOURCE_DIR
        + GoldenSSTables.fileName(c))) {
      assertNotNull(in, "golden file " + GoldenSSTables.fileName(c) + " is missing");
      return in.readAllBytes();
    }
  }

  @ParameterizedTest
  @EnumSource(Compression.class)
  void goldenFileReadsToItsContent(Compression c) throws IOException {
    FileStorage storage = new FileStorage(dir);
    try (WritableFile f = storage.create("golden.sst")) {
      f.append(golden(c));
    }
    for (boolean inMemory : new boolean[] {false, true}) {
      try (SSTableReader r = SSTableReader.open(storage.open("golden.sst"), null, inMemory)) {
        CellIterator it = r.iterator();
        it.seekToFirst();
        TestTables.assertSameEntries(GoldenSSTables.content(), TestTables.drain(it));
        assertEquals(GoldenSSTables.content().size(), r.info().entries());
        assertEquals(3, r.info().tombstones());
        assertTrue(r.dataBlockCount() > 1);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Compression.class)
  void writerReproducesGoldenFileByteForByte(Compression c) throws IOException {
    FileStorage storage = new FileStorage(dir);
    TestTables.write(storage, "fresh.sst", GoldenSSTables.options(c), GoldenSSTables.content());
    assertArrayEquals(golden(c), Files.readAllBytes(dir.resolve("fresh.sst")),
        "the writer's output for " + c + " differs from the golden file: the format drifted");
    if (c != Compression.NONE) {
      assertTrue(golden(c).length < golden(Compression.NONE).length, c + " compressed nothing");
    }
  }
}
