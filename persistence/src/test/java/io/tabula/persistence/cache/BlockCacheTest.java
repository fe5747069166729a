package io.tabula.persistence.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BlockCacheTest {
  private record Blob(int weightBytes) implements BlockCache.Weighed {}

  @Test
  void secondGetIsAHit() throws IOException {
    BlockCache cache = BlockCache.create(10_000);
    AtomicInteger loads = new AtomicInteger();
    Blob first = cache.get(1, 0, Blob.class, () -> {
      loads.incrementAndGet();
      return new Blob(100);
    });
    Blob second = cache.get(1, 0, Blob.class, () -> {
      loads.incrementAndGet();
      return new Blob(100);
    });
    assertSame(first, second);
    assertEquals(1, loads.get());
    BlockCache.Stats s = cache.stats();
    assertEquals(1, s.hits());
    assertEquals(1, s.misses());
    assertEquals(100, s.weightedBytes());
    assertEquals(0.5, s.hitRate());
  }

  @Test
  void weightStaysWithinCapacity() throws IOException {
    BlockCache cache = BlockCache.create(10_000);
    for (int i = 0; i < 1_000; i++) {
      cache.get(1, i * 1000L, Blob.class, () -> new Blob(1000));
      assertTrue(cache.stats().weightedBytes() <= 10_000, "weighted " + cache.stats().weightedBytes());
    }
    BlockCache.Stats s = cache.stats();
    assertTrue(s.evictions() >= 990, "evictions " + s.evictions());
    assertTrue(s.entries() <= 10, "entries " + s.entries());
  }

  @Test
  void fileIdsAreUniqueAndInvalidationIsPerFile() throws IOException {
    BlockCache cache = BlockCache.create(1 << 20);
    long a = cache.newFileId();
    long b = cache.newFileId();
    assertNotEquals(a, b);
    cache.get(a, 0, Blob.class, () -> new Blob(10));
    cache.get(b, 0, Blob.class, () -> new Blob(10));
    cache.invalidateFile(a);
    assertNull(cache.getIfPresent(a, 0, Blob.class));
    assertEquals(10, cache.getIfPresent(b, 0, Blob.class).weightBytes());
  }

  @Test
  void failedLoadCachesNothing() {
    BlockCache cache = BlockCache.create(1 << 20);
    assertThrows(IOException.class, () -> cache.get(1, 0, Blob.class, () -> {
      throw new IOException("disk on fire");
    }));
    assertEquals(0, cache.stats().entries());
    assertThrows(IllegalArgumentException.class, () -> BlockCache.create(-1));
  }
}
