package io.tabula.actors.tablet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TabletLoadTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static final byte[] NONE = new byte[0];

  @Test
  void theSplitRowHalvesTheSampledLoadNotTheKeySpace() {
    List<byte[]> keys = new ArrayList<>();
    Random r = new Random(1);
    // 3/4 of the accesses to a narrow range near the start ("a000".."a099"), 1/4 spread wide.
    for (int i = 0; i < 400; i++) {
      keys.add(b(i % 4 == 3 ? "z" + r.nextInt(1000) : String.format("a%03d", r.nextInt(100))));
    }
    byte[] row = TabletLoad.halvingRow(keys, NONE, NONE).orElseThrow();
    assertTrue(new String(row, StandardCharsets.UTF_8).startsWith("a0"), "the split row is inside the hot range");
    long below = keys.stream().filter(k -> java.util.Arrays.compare(k, row) < 0).count();
    assertTrue(below >= 180 && below <= 220, "about half the accesses are before the split row: " + below);
  }

  @Test
  void oneHotRowIsNotSplit() {
    List<byte[]> keys = new ArrayList<>(Collections.nCopies(300, b("hot")));
    for (int i = 0; i < 20; i++) {
      keys.add(b("k" + i));
    }
    assertTrue(TabletLoad.halvingRow(keys, NONE, NONE).isEmpty(), "no split moves load off a single row");
  }

  @Test
  void aHotRowAtTheMedianSplitsJustAfterIt() {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      keys.add(b(String.format("a%03d", i)));
    }
    keys.addAll(Collections.nCopies(120, b("m")));
    for (int i = 0; i < 100; i++) {
      keys.add(b(String.format("x%03d", i)));
    }
    assertArrayEquals(b("m"), TabletLoad.halvingRow(keys, NONE, NONE).orElseThrow(),
        "the hot row starts the right half, the rows before it the left");
  }

  @Test
  void tooFewSamplesOrKeysOutsideTheTabletGiveNoRow() {
    List<byte[]> few = new ArrayList<>();
    for (int i = 0; i < TabletLoad.SAMPLE_SIZE / 8 - 1; i++) {
      few.add(b("k" + i));
    }
    assertTrue(TabletLoad.halvingRow(few, NONE, NONE).isEmpty());
    List<byte[]> outside = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      outside.add(b(String.format("a%03d", i)));
    }
    assertTrue(TabletLoad.halvingRow(outside, b("m"), NONE).isEmpty(), "keys from before a split are not this tablet's");
  }

  @Test
  void takeCountsRowsAndBytesAndStartsAgain() {
    TabletLoad.TableTotals table = new TabletLoad.TableTotals();
    TabletLoad load = new TabletLoad("t", table);
    load.written(RowMutation.of(b("row"), new Mutation.SetCell("f", b("q"), 1, b("value"))));
    load.read(b("row"), 40);
    load.read(b("other"), 0);
    TabletLoad.Taken t = load.take(1_000_000_000L);
    assertEquals(new TabletLoad.Taken(2, 40, 1, 3 + 8 + 1 + 5), t);
    assertEquals(new TabletLoad.Taken(0, 0, 0, 0), load.take(1_000_000_000L));
    assertEquals(2, table.rowsRead(), "the table's totals keep counting");
    assertEquals(1, table.rowsWritten());
  }
}
