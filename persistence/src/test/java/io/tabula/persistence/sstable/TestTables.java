package io.tabula.persistence.sstable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;

/** Shared helpers of the SSTable tests: random models, writing them, reading back. */
final class TestTables {
  private TestTables() {}

  /** The seed of a randomized test: {@code -Dtabula.seed=N} to replay, else fresh (printed). */
  static long seed(String test) {
    String fixed = System.getProperty("tabula.seed");
    long seed = fixed != null ? Long.parseLong(fixed) : new Random().nextLong();
    System.out.println(test + ": seed " + seed + " (replay with -Dtabula.seed=" + seed + ")");
    return seed;
  }

  static SSTableInfo write(Storage storage, String path, SSTableOptions options, NavigableMap<CellKey, byte[]> model)
      throws IOException {
    try (SSTableWriter w = new SSTableWriter(storage.create(path), options)) {
      for (Map.Entry<CellKey, byte[]> e : model.entrySet()) {
        w.add(e.getKey(), e.getValue());
      }
      return w.finish();
    }
  }

  static List<Map.Entry<CellKey, byte[]>> drain(CellIterator it) throws IOException {
    List<Map.Entry<CellKey, byte[]>> out = new ArrayList<>();
    for (; it.valid(); it.next()) {
      out.add(Map.entry(it.key(), it.value()));
    }
    return out;
  }

  static void assertSameEntries(NavigableMap<CellKey, byte[]> model, List<Map.Entry<CellKey, byte[]>> actual) {
    assertEquals(model.size(), actual.size(), "entry count");
    int i = 0;
    for (Map.Entry<CellKey, byte[]> e : model.entrySet()) {
      Map.Entry<CellKey, byte[]> a = actual.get(i++);
      assertEquals(e.getKey(), a.getKey(), "key " + i);
      assertEquals(e.getKey().kind(), a.getKey().kind(), "kind " + i);
      assertArrayEquals(e.getValue(), a.getValue(), "value of " + e.getKey());
    }
  }

  /** A random table: every kind, rows sharing prefixes, empty, small, large and block-sized values. */
  static NavigableMap<CellKey, byte[]> randomModel(Random rnd, int entries) {
    NavigableMap<CellKey, byte[]> model = new TreeMap<>(CellKey.ORDER);
    while (model.size() < entries) {
      CellKey k = randomKey(rnd);
      model.put(k, randomValue(rnd, k.kind()));
    }
    return model;
  }

  static CellKey randomKey(Random rnd) {
    byte[] row = ByteArrays.utf8("row" + rnd.nextInt(200) + (rnd.nextInt(4) == 0 ? "/" + rnd.nextInt(5) : ""));
    byte[] family = ByteArrays.utf8(new String[] {"a", "anchor", "contents", "f\u00e9"}[rnd.nextInt(4)]);
    byte[] qualifier = new byte[rnd.nextInt(4) == 0 ? 0 : 1 + rnd.nextInt(12)];
    rnd.nextBytes(qualifier);
    if (rnd.nextBoolean()) {
      qualifier = ByteArrays.utf8("q" + rnd.nextInt(10));
    }
    long ts = rnd.nextInt(3) == 0 ? rnd.nextLong() & Long.MAX_VALUE : rnd.nextInt(1000);
    long seq = rnd.nextInt(1_000_000);
    int r = rnd.nextInt(100);
    CellKind kind = r < 85 ? CellKind.PUT : r < 92 ? CellKind.DELETE_COLUMN : r < 96 ? CellKind.DELETE_FAMILY
        : CellKind.DELETE_ROW;
    return CellKey.of(row, family, qualifier, ts, seq, kind);
  }

  static byte[] randomValue(Random rnd, CellKind kind) {
    if (kind == CellKind.DELETE_COLUMN) {
      byte[] range = new byte[16];
      rnd.nextBytes(range);
      return range;
    }
    if (kind != CellKind.PUT) {
      return ByteArrays.EMPTY;
    }
    int r = rnd.nextInt(100);
    int len = r < 10 ? 0 : r < 80 ? rnd.nextInt(40) : r < 98 ? rnd.nextInt(2000) : 65_536 + rnd.nextInt(40_000);
    byte[] v = new byte[len];
    if (rnd.nextBoolean()) {
      rnd.nextBytes(v);
    } else {
      byte[] word = ByteArrays.utf8("value-" + rnd.nextInt(50) + " ");
      for (int i = 0; i < len; i++) {
        v[i] = word[i % word.length];
      }
    }
    return v;
  }

  static byte[] flip(byte[] b, long at) {
    byte[] c = Arrays.copyOf(b, b.length);
    c[(int) at] ^= (byte) 0x5A;
    return c;
  }
}
