package io.tabula.persistence.sstable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.storage.FileStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.NavigableMap;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SSTable readers share the block cache: repeated reads hit, weight stays bounded, close drops the file. */
class SSTableCacheTest {
  @TempDir
  Path dir;

  @Test
  void secondReadOfABlockIsAHit() throws IOException {
    FileStorage storage = new FileStorage(dir);
    NavigableMap<CellKey, byte[]> model = TestTables.randomModel(new Random(5), 500);
    TestTables.write(storage, "a.sst", SSTableOptions.defaults().withBlockSize(1024), model);
    BlockCache cache = BlockCache.create(64L << 20);
    try (SSTableReader r = SSTableReader.open(storage.open("a.sst"), cache, false)) {
      CellKey target = model.keySet().stream().skip(250).findFirst().orElseThrow();
      CellIterator first = r.iterator();
      first.seek(target);
      assertEquals(target, first.key());
      BlockCache.Stats afterFirst = cache.stats();
      assertEquals(0, afterFirst.hits());
      assertEquals(1, afterFirst.misses());

      CellIterator second = r.iterator();
      second.seek(target);
      assertEquals(target, second.key());
      BlockCache.Stats afterSecond = cache.stats();
      assertEquals(1, afterSecond.hits());
      assertEquals(1, afterSecond.misses());
      assertTrue(afterSecond.weightedBytes() > 0);
    }
    assertEquals(0, cache.stats().entries(), "closing the reader drops its blocks");
  }

  @Test
  void cacheWeightIsBoundedByCapacity() throws IOException {
    FileStorage storage = new FileStorage(dir);
    NavigableMap<CellKey, byte[]> model = TestTables.randomModel(new Random(6), 2000);
    TestTables.write(storage, "b.sst", SSTableOptions.defaults().withBlockSize(512), model);
    BlockCache cache = BlockCache.create(16 * 1024);
    try (SSTableReader r = SSTableReader.open(storage.open("b.sst"), cache, false)) {
      assertTrue(r.dataBlockCount() > 100);
      for (int pass = 0; pass < 2; pass++) {
        CellIterator it = r.iterator();
        TestTables.assertSameEntries(model, TestTables.drain(seekFirst(it)));
        assertTrue(cache.stats().weightedBytes() <= 16 * 1024, "weighted " + cache.stats().weightedBytes());
      }
      assertTrue(cache.stats().evictions() > 0);
    }
  }

  private static CellIterator seekFirst(CellIterator it) throws IOException {
    it.seekToFirst();
    return it;
  }
}
