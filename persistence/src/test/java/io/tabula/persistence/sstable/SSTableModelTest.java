package io.tabula.persistence.sstable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.storage.FileStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Randomized round trips of SSTables against a {@code TreeMap} model. */
class SSTableModelTest {
  @TempDir
  Path dir;

  static Stream<Arguments> layouts() {
    List<Arguments> out = new ArrayList<>();
    for (Compression c : Compression.values()) {
      for (int blockSize : new int[] {256, 64 * 1024}) {
        for (boolean inMemory : new boolean[] {false, true}) {
          out.add(Arguments.of(c, blockSize, inMemory));
        }
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0}, {1}-byte blocks, inMemory={2}")
  @MethodSource("layouts")
  void roundTripMatchesModel(Compression compression, int blockSize, boolean inMemory) throws IOException {
    Random rnd = new Random(TestTables.seed("roundTripMatchesModel " + compression + " " + blockSize + " " + inMemory));
    NavigableMap<CellKey, byte[]> model = TestTables.randomModel(rnd, 1500 + rnd.nextInt(1000));
    FileStorage storage = new FileStorage(dir);
    SSTableOptions options = SSTableOptions.defaults().withBlockSize(blockSize).withCompression(compression)
        .withRestartInterval(1 + rnd.nextInt(20));
    SSTableInfo written = TestTables.write(storage, "t/1.sst", options, model);

    assertEquals(model.size(), written.entries());
    assertEquals(storage.size("t/1.sst"), written.fileBytes());
    assertArrayEquals(model.firstKey().row(), written.firstRow());
    assertArrayEquals(model.lastKey().row(), written.lastRow());
    assertEquals(model.keySet().stream().mapToLong(CellKey::sequence).max().getAsLong(), written.maxSequence());
    assertEquals(model.keySet().stream().mapToLong(CellKey::sequence).min().getAsLong(), written.minSequence());
    assertEquals(model.keySet().stream().filter(k -> k.kind().isTombstone()).count(), written.tombstones());

    BlockCache cache = BlockCache.create(1 << 20);
    try (SSTableReader r = SSTableReader.open(storage.open("t/1.sst"), cache, inMemory)) {
      assertEquals(written, r.info());
      assertEquals("t/1.sst", r.path());
      CellIterator it = r.iterator();
      assertFalse(it.valid());
      it.seekToFirst();
      TestTables.assertSameEntries(model, TestTables.drain(it));

      for (int i = 0; i < 2000; i++) {
        CellKey target = rnd.nextInt(3) == 0 ? randomExisting(rnd, model) : TestTables.randomKey(rnd);
        if (rnd.nextInt(10) == 0) {
          target = CellKey.firstOfRow(target.row());
        }
        it.seek(target);
        CellKey expected = model.ceilingKey(target);
        if (expected == null) {
          assertFalse(it.valid(), "seek past the end of " + target);
          continue;
        }
        assertTrue(it.valid(), "seek " + target);
        assertEquals(expected, it.key(), "seek " + target);
        assertArrayEquals(model.get(expected), it.value());
        // A few steps on from the seek, crossing blocks.
        CellKey k = expected;
        for (int s = 0; s < 3 && (k = model.higherKey(k)) != null; s++) {
          it.next();
          assertEquals(k, it.key());
        }
      }

      it.seek(CellKey.firstOfRow(ByteArrays.utf8("zzz")));
      assertFalse(it.valid());
      assertThrows(IllegalStateException.class, it::key);
      it.seekToFirst();
      assertEquals(model.firstKey(), it.key());
    }
  }

  private static CellKey randomExisting(Random rnd, NavigableMap<CellKey, byte[]> model) {
    CellKey probe = TestTables.randomKey(rnd);
    CellKey k = model.ceilingKey(probe);
    return k != null ? k : model.firstKey();
  }

  @Test
  void emptyTable() throws IOException {
    FileStorage storage = new FileStorage(dir);
    SSTableInfo info = TestTables.write(storage, "empty.sst", SSTableOptions.defaults(),
        new TreeMap<>(CellKey.ORDER));
    assertEquals(0, info.entries());
    for (boolean inMemory : new boolean[] {false, true}) {
      try (SSTableReader r = SSTableReader.open(storage.open("empty.sst"), null, inMemory)) {
        CellIterator it = r.iterator();
        it.seekToFirst();
        assertFalse(it.valid());
        it.seek(CellKey.firstOfRow(ByteArrays.utf8("a")));
        assertFalse(it.valid());
        assertFalse(r.mayContainRow(ByteArrays.utf8("a")));
      }
    }
  }

  @Test
  void noBloomFilterAnswersMaybe() throws IOException {
    FileStorage storage = new FileStorage(dir);
    NavigableMap<CellKey, byte[]> model = TestTables.randomModel(new Random(7), 100);
    TestTables.write(storage, "nobloom.sst", SSTableOptions.defaults().withBloomBitsPerKey(0), model);
    try (SSTableReader r = SSTableReader.open(storage.open("nobloom.sst"), null, false)) {
      assertFalse(r.hasBloomFilter());
      assertTrue(r.mayContainRow(model.firstKey().row()));
      assertTrue(r.mayContainColumn(model.firstKey().row(), ByteArrays.utf8("nope"), ByteArrays.utf8("nope")));
      r.iterator().seekToFirst();
    }
  }

  @Test
  void writerRefusesKeysOutOfOrder() throws IOException {
    FileStorage storage = new FileStorage(dir);
    try (SSTableWriter w = new SSTableWriter(storage.create("bad.sst"), SSTableOptions.defaults())) {
      CellKey b = CellKey.put(ByteArrays.utf8("b"), ByteArrays.utf8("f"), ByteArrays.utf8("q"), 5, 1);
      w.add(b, ByteArrays.EMPTY);
      assertThrows(IllegalArgumentException.class, () -> w.add(b, ByteArrays.EMPTY));
      CellKey a = CellKey.put(ByteArrays.utf8("a"), ByteArrays.utf8("f"), ByteArrays.utf8("q"), 5, 1);
      assertThrows(IllegalArgumentException.class, () -> w.add(a, ByteArrays.EMPTY));
      // Newer timestamp of the same column sorts first, so it may not follow.
      CellKey newer = CellKey.put(ByteArrays.utf8("b"), ByteArrays.utf8("f"), ByteArrays.utf8("q"), 6, 1);
      assertThrows(IllegalArgumentException.class, () -> w.add(newer, ByteArrays.EMPTY));
      w.finish();
      assertThrows(IllegalStateException.class, () -> w.add(newer, ByteArrays.EMPTY));
    }
  }

  @Test
  void optionsAreValidated() {
    assertThrows(IllegalArgumentException.class, () -> new SSTableOptions(10, Compression.NONE, 10, 16));
    assertThrows(IllegalArgumentException.class, () -> new SSTableOptions(4096, Compression.NONE, -1, 16));
    assertThrows(IllegalArgumentException.class, () -> new SSTableOptions(4096, Compression.NONE, 10, 0));
    assertThrows(NullPointerException.class, () -> new SSTableOptions(4096, null, 10, 16));
    SSTableOptions d = SSTableOptions.defaults();
    assertEquals(new SSTableOptions(16 * 1024, Compression.NONE, 10, 16), d);
  }

  @Test
  void compressionCodesAreStable() {
    assertEquals(0, Compression.NONE.code());
    assertEquals(1, Compression.LZ4.code());
    assertEquals(2, Compression.ZSTD.code());
    for (Compression c : Compression.values()) {
      assertEquals(c, Compression.fromCode(c.code()));
    }
    assertEquals(null, Compression.fromCode(3));
  }

  @Test
  void readsBlockByBlockWithoutACache() throws IOException {
    FileStorage storage = new FileStorage(dir);
    NavigableMap<CellKey, byte[]> model = TestTables.randomModel(new Random(11), 3000);
    TestTables.write(storage, "big.sst", SSTableOptions.defaults().withBlockSize(1024), model);
    // No cache and not in memory: every block is read from the file as the cursor reaches it.
    try (SSTableReader r = SSTableReader.open(storage.open("big.sst"), null, false)) {
      assertTrue(r.dataBlockCount() > 10);
      CellIterator it = r.iterator();
      it.seekToFirst();
      List<Map.Entry<CellKey, byte[]>> all = TestTables.drain(it);
      TestTables.assertSameEntries(model, all);
    }
  }
}
