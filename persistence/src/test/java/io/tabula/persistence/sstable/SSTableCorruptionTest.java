package io.tabula.persistence.sstable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import io.tabula.persistence.encoding.ByteSink;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Damaged SSTables are reported as {@link CorruptionException}s naming the bad region; no wrong data escapes. */
class SSTableCorruptionTest {
  private static final String GOOD = "good.sst";
  private static final String BAD = "bad.sst";

  @TempDir
  Path dir;

  private FileStorage storage;
  private NavigableMap<CellKey, byte[]> model;

  @BeforeEach
  void setUp() throws IOException {
    storage = new FileStorage(dir);
    model = TestTables.randomModel(new Random(42), 400);
  }

  private byte[] writeGood(Compression c) throws IOException {
    TestTables.write(storage, GOOD, SSTableOptions.defaults().withBlockSize(512).withCompression(c), model);
    return Files.readAllBytes(dir.resolve(GOOD));
  }

  private void writeBad(byte[] bytes) throws IOException {
    try (WritableFile f = storage.create(BAD)) {
      f.append(bytes);
    }
  }

  private static Footer footer(byte[] file) throws CorruptionException {
    int at = file.length - SSTableFormat.FOOTER_SIZE;
    return Footer.decode(file, at, GOOD, at);
  }

  private CorruptionException openFails(boolean inMemory) {
    return assertThrows(CorruptionException.class, () -> {
      try (SSTableReader r = SSTableReader.open(storage.open(BAD), null, inMemory)) {
        fail("opened a damaged table: " + r);
      }
    });
  }

  private static void assertInside(CorruptionException e, long start, long endExclusive) {
    assertEquals(BAD, e.file(), e.getMessage());
    assertTrue(e.offset() >= start && e.offset() < endExclusive,
        "offset " + e.offset() + " outside [" + start + ", " + endExclusive + "): " + e.getMessage());
  }

  /** Reads everything, checking each entry against the model as it comes. */
  private void scanMatchingModel(SSTableReader r) throws IOException {
    Iterator<Map.Entry<CellKey, byte[]>> expected = model.entrySet().iterator();
    CellIterator it = r.iterator();
    for (it.seekToFirst(); it.valid(); it.next()) {
      Map.Entry<CellKey, byte[]> e = expected.next();
      assertEquals(e.getKey(), it.key());
      assertEquals(e.getKey().kind(), it.key().kind());
      assertArrayEquals(e.getValue(), it.value());
    }
    assertFalse(expected.hasNext(), "entries missing");
  }

  /** A full scan fails, and what it returned before failing was right. */
  private CorruptionException scanFails(SSTableReader r) {
    return assertThrows(CorruptionException.class, () -> scanMatchingModel(r));
  }

  @ParameterizedTest
  @EnumSource(Compression.class)
  void damagedDataBlockFailsOnRead(Compression c) throws IOException {
    byte[] good = writeGood(c);
    long start;
    long end;
    try (SSTableReader r = SSTableReader.open(storage.open(GOOD), null, false)) {
      assertTrue(r.dataBlockCount() > 3);
      start = r.dataBlockOffset(2);
      end = r.dataBlockOffset(3);
    }
    for (long at : new long[] {start, (start + end) / 2, end - 1}) {
      writeBad(TestTables.flip(good, at));
      for (boolean inMemory : new boolean[] {false, true}) {
        BlockCache cache = BlockCache.create(1 << 20);
        try (SSTableReader r = SSTableReader.open(storage.open(BAD), inMemory ? null : cache, inMemory)) {
          assertEquals(start, scanFails(r).offset());
          CorruptionException e = assertThrows(CorruptionException.class, () -> {
            CellIterator it = r.iterator();
            it.seek(r.lastKeyOfBlock(2));
          });
          assertInside(e, start, end);
        }
        assertEquals(0, cache.stats().entries(), "nothing stays cached after close");
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Compression.class)
  void damagedMetaBlocksFailOnOpen(Compression c) throws IOException {
    byte[] good = writeGood(c);
    Footer f = footer(good);
    long footerAt = good.length - SSTableFormat.FOOTER_SIZE;
    long[][] regions = {
        {f.bloomOffset(), f.propertiesOffset()},
        {f.propertiesOffset(), f.indexOffset()},
        {f.indexOffset(), footerAt},
    };
    for (long[] region : regions) {
      for (long at = region[0]; at < region[1]; at += Math.max(1, (region[1] - region[0]) / 7)) {
        writeBad(TestTables.flip(good, at));
        for (boolean inMemory : new boolean[] {false, true}) {
          assertEquals(region[0], openFails(inMemory).offset(), "flip at " + at);
        }
      }
    }
  }

  @Test
  void everyDamagedFooterByteFailsOnOpen() throws IOException {
    byte[] good = writeGood(Compression.NONE);
    long footerAt = good.length - SSTableFormat.FOOTER_SIZE;
    for (long at = footerAt; at < good.length; at++) {
      writeBad(TestTables.flip(good, at));
      CorruptionException e = openFails(false);
      assertEquals(footerAt, e.offset(), e.getMessage());
      assertEquals(BAD, e.file());
    }
  }

  @Test
  void truncatedFileFailsOnOpen() throws IOException {
    byte[] good = writeGood(Compression.LZ4);
    for (int len : new int[] {0, 1, SSTableFormat.FOOTER_SIZE - 1, SSTableFormat.FOOTER_SIZE, good.length / 2,
        good.length - SSTableFormat.FOOTER_SIZE, good.length - 1}) {
      writeBad(Arrays.copyOf(good, len));
      for (boolean inMemory : new boolean[] {false, true}) {
        CorruptionException e = openFails(inMemory);
        assertInside(e, 0, Math.max(1, len));
      }
    }
  }

  @Test
  void unknownCompressionCodeIsCorruption() throws IOException {
    byte[] bad = writeGood(Compression.NONE);
    int payload;
    try (SSTableReader r = SSTableReader.open(storage.open(GOOD), null, false)) {
      payload = (int) (r.dataBlockOffset(1) - SSTableFormat.BLOCK_TRAILER_SIZE);
    }
    // A well-formed trailer with a code no version ever used.
    bad[payload + SSTableFormat.TRAILER_CODE_OFFSET] = 9;
    ByteSink.putIntAt(bad, payload + SSTableFormat.TRAILER_CRC_OFFSET, BlockCodec.crc(bad, 0, payload + 1));
    writeBad(bad);
    try (SSTableReader r = SSTableReader.open(storage.open(BAD), null, false)) {
      CorruptionException e = scanFails(r);
      assertEquals(0, e.offset());
      assertTrue(e.getMessage().contains("unknown compression code 9"), e.getMessage());
    }
  }

  @Test
  void unknownVersionIsCorruption() throws IOException {
    byte[] bad = writeGood(Compression.NONE);
    int footerAt = bad.length - SSTableFormat.FOOTER_SIZE;
    ByteSink.putIntAt(bad, footerAt + SSTableFormat.FOOTER_VERSION, 99);
    ByteSink.putIntAt(bad, footerAt + SSTableFormat.FOOTER_CRC, BlockCodec.crc(bad, footerAt, SSTableFormat.FOOTER_CRC));
    writeBad(bad);
    CorruptionException e = openFails(false);
    assertEquals(footerAt, e.offset());
    assertTrue(e.getMessage().contains("version 99"), e.getMessage());
  }

  @Test
  void noSingleByteDamageReturnsWrongData() throws IOException {
    model = TestTables.randomModel(new Random(3), 12);
    model.replaceAll((k, v) -> Arrays.copyOf(v, Math.min(v.length, 30)));
    for (Compression c : Compression.values()) {
      byte[] good = writeGood(c);
      for (int at = 0; at < good.length; at++) {
        writeBad(TestTables.flip(good, at));
        boolean inMemory = at % 2 == 0;
        CorruptionException e = assertThrows(CorruptionException.class, () -> {
          try (SSTableReader r = SSTableReader.open(storage.open(BAD), null, inMemory)) {
            scanMatchingModel(r);
          }
        }, "damage at " + at + " of " + good.length);
        assertEquals(BAD, e.file());
      }
    }
  }
}
