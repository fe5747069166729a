package io.tabula.persistence.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A memtable's values in chunks: each value reads back as written, also with writers
 * copying at once; small values share chunks that grow to the largest size; large and
 * empty values keep their own arrays.
 */
class ValueSlabTest {
  private static byte[] value(Random r, int n) {
    byte[] v = new byte[n];
    r.nextBytes(v);
    return v;
  }

  @Test
  void valuesReadBackAsWrittenFromChunksThatGrow() {
    ValueSlab slab = new ValueSlab();
    Random r = new Random(7);
    List<byte[]> written = new ArrayList<>();
    List<ValueSlab.Slice> kept = new ArrayList<>();
    long total = 0;
    while (total < 3L * ValueSlab.MAX_CHUNK_BYTES) {
      byte[] v = value(r, 1 + r.nextInt(2000));
      written.add(v);
      kept.add(slab.copy(v));
      total += v.length;
    }
    IdentityHashMap<byte[], Boolean> chunks = new IdentityHashMap<>();
    int largest = 0;
    long before = 0;
    for (int i = 0; i < written.size(); i++) {
      assertArrayEquals(written.get(i), kept.get(i).bytes(), "value " + i);
      if (before >= ValueSlab.FIRST_CHUNK_BYTES) {
        assertNotSame(written.get(i), kept.get(i).array(), "a small value is copied into a chunk");
        chunks.put(kept.get(i).array(), true);
      } else {
        assertSame(written.get(i), kept.get(i).array(), "the first values keep their own arrays");
      }
      before += written.get(i).length;
      largest = Math.max(largest, kept.get(i).array().length);
    }
    assertEquals(ValueSlab.MAX_CHUNK_BYTES, largest, "chunks grow to the largest size");
    assertTrue(chunks.size() < written.size() / 100, "values share chunks: " + chunks.size());
  }

  /**
   * A memtable that took a few writes holds no chunk: a node may hold a hundred thousand of
   * them after a bulk load of a row per tablet, and a first chunk each (64 KiB) did not fit its
   * heap.
   */
  @Test
  void aFewSmallValuesTakeNoChunk() {
    ValueSlab slab = new ValueSlab();
    Random r = new Random(3);
    for (long total = 0; total < ValueSlab.FIRST_CHUNK_BYTES; ) {
      byte[] v = value(r, 1 + r.nextInt(999));
      assertSame(v, slab.copy(v).array(), "a value of a small memtable keeps its own array");
      total += v.length;
    }
    byte[] more = value(r, 2_000);
    ValueSlab.Slice s = slab.copy(more);
    assertNotSame(more, s.array(), "past the first chunk's size, values go to chunks");
    assertEquals(ValueSlab.FIRST_CHUNK_BYTES, s.array().length, "the first chunk");
  }

  @Test
  void largeAndEmptyValuesKeepTheirOwnArrays() {
    ValueSlab slab = new ValueSlab();
    byte[] big = value(new Random(1), ValueSlab.OWN_ARRAY_BYTES);
    assertSame(big, slab.copy(big).bytes());
    byte[] empty = new byte[0];
    assertSame(empty, slab.copy(empty).bytes());
  }

  @Test
  void concurrentWritersEachGetTheirOwnBytes() throws Exception {
    ValueSlab slab = new ValueSlab();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int seed = t;
        done.add(pool.submit(() -> {
          Random r = new Random(seed);
          List<byte[]> written = new ArrayList<>();
          List<ValueSlab.Slice> kept = new ArrayList<>();
          for (int i = 0; i < 20_000; i++) {
            byte[] v = value(r, 1 + r.nextInt(300));
            written.add(v);
            kept.add(slab.copy(v));
          }
          for (int i = 0; i < written.size(); i++) {
            assertArrayEquals(written.get(i), kept.get(i).bytes());
          }
          return written.size();
        }));
      }
      for (Future<Integer> f : done) {
        assertEquals(20_000, f.get());
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
