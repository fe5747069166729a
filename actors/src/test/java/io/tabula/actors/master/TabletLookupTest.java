package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.schema.GcPolicy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the master answers a node's lookup of a table's tablets, from a real directory. */
class TabletLookupTest {
  private static byte[] row(int i) {
    return String.format("r%05d", i).getBytes(StandardCharsets.UTF_8);
  }

  /** Table t of {@code n} tablets split at r00001 .. r{n-1}, each start key padded to {@code pad} bytes. */
  static Directory table(int n, int pad) {
    List<TabletInfo> tablets = new ArrayList<>();
    Map<String, TabletPlacement> placements = new HashMap<>();
    byte[] start = new byte[0];
    for (int i = 0; i < n; i++) {
      byte[] end = i == n - 1 ? new byte[0] : Arrays.copyOf(row(i + 1), Math.max(pad, 6));
      String id = "t-" + i;
      tablets.add(new TabletInfo("t", id, start, end, Map.of("f", List.of("sst-" + i)), 7));
      placements.put(id, new TabletPlacement("n1", TabletPlacement.State.SERVING, "", List.of()));
      start = end;
    }
    return new Directory(9, n + 1, Map.of("t", new TableInfo("t", Map.of("f", GcPolicy.KEEP_ALL), 0)),
        Map.of("t", tablets), placements);
  }

  private static List<String> ids(TabletLookup.Located a) {
    return a.tablets().stream().map(TabletInfo::id).toList();
  }

  @Test
  void forwardsTheTabletHoldingTheRowAndThoseAfterItWithoutTheirFiles() {
    Directory d = table(10, 0);
    TabletLookup.Located a = TabletLookup.answer(d, "t", row(3), false, 4);
    assertEquals(9, a.version());
    assertTrue(a.tableKnown());
    assertEquals(List.of("t-3", "t-4", "t-5", "t-6"), ids(a));
    assertTrue(a.tablets().stream().allMatch(t -> t.files().isEmpty() && t.redoPoint() == 0), "no files");
    assertEquals(List.of("t-8", "t-9"), ids(TabletLookup.answer(d, "t", row(8), false, 100)), "to the table's end");
    assertEquals(List.of("t-0"), ids(TabletLookup.answer(d, "t", new byte[0], false, 0)), "at least the one");
  }

  @Test
  void beforeTheTabletHoldingTheRowsBelowARowAndThoseBeforeItInRowOrder() {
    Directory d = table(10, 0);
    // r00004 starts t-4: the greatest rows below it are t-3's
    assertEquals(List.of("t-1", "t-2", "t-3"), ids(TabletLookup.answer(d, "t", row(4), true, 3)));
    assertEquals(List.of("t-8", "t-9"), ids(TabletLookup.answer(d, "t", new byte[0], true, 2)), "empty: the last");
    assertEquals(List.of("t-0"), ids(TabletLookup.answer(d, "t", row(1), true, 5)));
  }

  @Test
  void anUnknownTableIsSaidSo() {
    TabletLookup.Located a = TabletLookup.answer(table(3, 0), "other", row(1), false, 10);
    assertFalse(a.tableKnown());
    assertTrue(a.tablets().isEmpty());
  }

  @Test
  void anAnswerOfLongRowKeysStaysFarUnderTheFrame() {
    Directory d = table(2_000, 4_096);
    TabletLookup.Located a = TabletLookup.answer(d, "t", new byte[0], false, TabletLookup.MOST_TABLETS);
    long bytes = a.tablets().stream().mapToLong(t -> t.startRow().length + t.endRow().length + t.id().length()).sum();
    assertTrue(a.tablets().size() > 10 && a.tablets().size() < 100, "tablets: " + a.tablets().size());
    assertTrue(bytes <= TabletLookup.MOST_BYTES, "bytes: " + bytes);
    assertEquals(TabletLookup.MOST_TABLETS,
        TabletLookup.answer(table(2_000, 0), "t", new byte[0], false, 5_000).tablets().size(), "at most 1,000");
  }
}
