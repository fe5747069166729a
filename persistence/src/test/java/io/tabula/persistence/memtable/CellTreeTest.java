package io.tabula.persistence.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The memtable's B+tree against a {@link TreeMap} in the same order. */
class CellTreeTest {
  private static final byte[][] FAMILIES = {bytes("a"), bytes("cf")};
  private static final byte[][] QUALIFIERS = {bytes(""), bytes("q"), bytes("q\u0000")};

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Rows that share long prefixes, so keys often tie on their first 16 bytes. */
  private static CellKey randomKey(Random r, int rows) {
    int n = r.nextInt(rows);
    String row = switch (n % 3) {
      case 0 -> "row" + n;
      case 1 -> "a-very-long-shared-prefix/" + n;
      default -> "r" + "\u0000".repeat(n % 5) + n;
    };
    CellKind kind = r.nextInt(10) == 0 ? CellKind.values()[r.nextInt(CellKind.values().length)] : CellKind.PUT;
    return CellKey.of(bytes(row), FAMILIES[r.nextInt(2)], QUALIFIERS[r.nextInt(3)], r.nextInt(4) * 1000L,
        r.nextInt(50), kind);
  }

  private static void assertSameEntries(TreeMap<CellKey, byte[]> expected, CellTree tree) {
    List<CellKey> got = new ArrayList<>();
    CellTree.Cursor c = tree.cursor();
    c.seekToFirst();
    for (Map.Entry<CellKey, byte[]> e : expected.entrySet()) {
      assertTrue(c.valid(), "the tree ended before " + e.getKey());
      assertEquals(e.getKey(), c.key());
      assertSame(e.getValue(), c.value(), "value of " + e.getKey());
      got.add(c.key());
      c.next();
    }
    assertFalse(c.valid(), "the tree has more entries than expected after " + got.size());
    assertEquals(expected.size(), tree.size());
  }

  private static ValueSlab.Slice slice(byte[] v) {
    return new ValueSlab.Slice(v, 0, v.length);
  }

  @Test
  void randomPutsRemovesAndSeeksMatchASortedMap() {
    for (int seed = 0; seed < 20; seed++) {
      Random r = new Random(seed);
      TreeMap<CellKey, byte[]> expected = new TreeMap<>(CellKey.ORDER);
      CellTree tree = new CellTree();
      int rows = 1 + r.nextInt(2000);
      for (int op = 0; op < 6000; op++) {
        CellKey k = randomKey(r, rows);
        if (r.nextInt(8) == 0) {
          ValueSlab.Slice removed = tree.remove(k);
          assertSame(expected.remove(k), removed == null ? null : removed.bytes(), "remove " + k);
        } else {
          byte[] v = new byte[] {(byte) op};
          boolean absent = !expected.containsKey(k);
          if (absent) {
            expected.put(k, v);
          }
          assertEquals(absent, tree.put(k, slice(v)), "put " + k);
        }
      }
      assertSameEntries(expected, tree);
      CellTree.Cursor c = tree.cursor();
      for (int i = 0; i < 500; i++) {
        CellKey target = randomKey(r, rows);
        c.seek(target);
        Map.Entry<CellKey, byte[]> e = expected.ceilingEntry(target);
        for (int step = 0; step < 3; step++) {
          if (e == null) {
            assertFalse(c.valid(), "nothing at or after " + target);
            break;
          }
          assertTrue(c.valid(), "expected " + e.getKey());
          assertEquals(e.getKey(), c.key());
          c.next();
          e = expected.higherEntry(e.getKey());
        }
      }
    }
  }

  @Test
  void ascendingAndDescendingLoadsKeepOrder() {
    for (boolean ascending : new boolean[] {true, false}) {
      TreeMap<CellKey, byte[]> expected = new TreeMap<>(CellKey.ORDER);
      CellTree tree = new CellTree();
      for (int i = 0; i < 50_000; i++) {
        int n = ascending ? i : 50_000 - i;
        CellKey k = CellKey.put(bytes(String.format("row%010d", n)), bytes("cf"), bytes("q"), 1, i);
        byte[] v = {(byte) i};
        expected.put(k, v);
        assertTrue(tree.put(k, slice(v)));
      }
      assertSameEntries(expected, tree);
    }
  }

  @Test
  void emptyTreeAndTreeEmptiedByRemovesHaveNoEntries() {
    CellTree tree = new CellTree();
    CellTree.Cursor c = tree.cursor();
    c.seekToFirst();
    assertFalse(c.valid());
    List<CellKey> keys = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      keys.add(CellKey.put(bytes("r" + i), bytes("f"), bytes("q"), 1, i));
      tree.put(keys.get(i), slice(new byte[] {1}));
    }
    for (CellKey k : keys) {
      assertArrayEquals(new byte[] {1}, tree.remove(k).bytes());
    }
    assertNull(tree.remove(keys.get(0)));
    assertEquals(0, tree.size());
    c.seekToFirst();
    assertFalse(c.valid(), "empty leaves are skipped");
    c.seek(keys.get(500));
    assertFalse(c.valid());
  }

  /**
   * A reader sees the tree as it was when it sought: while one writer adds keys, every
   * pass of a reader is in strictly ascending order and holds at least the entries that
   * were there before its seek.
   */
  @Test
  void readersSeeConsistentSnapshotsWhileAWriterAdds() throws Exception {
    CellTree tree = new CellTree();
    AtomicBoolean done = new AtomicBoolean();
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    List<Thread> readers = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      Thread reader = new Thread(() -> {
        CellTree.Cursor c = tree.cursor();
        while (!done.get() && problems.isEmpty()) {
          int before = tree.size();
          c.seekToFirst();
          int seen = 0;
          CellKey last = null;
          while (c.valid()) {
            if (last != null && CellKey.compare(last, c.key()) >= 0) {
              problems.add("out of order: " + last + " then " + c.key());
            }
            last = c.key();
            seen++;
            c.next();
          }
          if (seen < before) {
            problems.add("a pass saw " + seen + " entries, " + before + " were there before it began");
          }
        }
      });
      reader.start();
      readers.add(reader);
    }
    Random r = new Random(3);
    for (int i = 0; i < 30_000; i++) {
      tree.put(CellKey.put(bytes("row" + r.nextInt(1_000_000)), bytes("f"), bytes("q"), 1, i), slice(new byte[0]));
    }
    done.set(true);
    for (Thread reader : readers) {
      reader.join(60_000);
      assertFalse(reader.isAlive(), "a reader did not stop");
    }
    assertEquals(List.of(), List.copyOf(problems));
  }
}
