package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LoadHistoryTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Directory table(String... bounds) {
    List<TabletInfo> tablets = new java.util.ArrayList<>();
    byte[] start = new byte[0];
    for (int i = 0; i <= bounds.length; i++) {
      byte[] end = i < bounds.length ? b(bounds[i]) : new byte[0];
      tablets.add(TabletInfo.empty("t", "t-" + (i + 1), start, end));
      start = end;
    }
    return Directory.EMPTY.withTable(new TableInfo("t", Map.of(), 0), tablets, bounds.length + 2);
  }

  private static Master.ReportLoad report(String tablet, long reads, long writes) {
    return new Master.ReportLoad(tablet, reads, writes, 0, 1_000_000_000L, reads * 10, writes * 100);
  }

  @Test
  void reportsLandInTheirColumnAndBand() {
    LoadHistory h = new LoadHistory(1000, 5);
    Directory d = table("m");
    h.add(d, report("t-1", 10, 0), 10_000);
    h.add(d, report("t-2", 0, 40), 10_500);
    h.add(d, report("t-2", 0, 20), 11_200);
    LoadHistory.View v = h.view(d, "t", 1_000_000);
    assertEquals(List.of(10_000L, 11_000L), v.columnStarts());
    assertEquals(List.of("\"\"", "\"m\""), v.bandStarts());
    assertEquals(10f, v.value(0, 0, 0), "rows read per second: 10 in a 1 s column");
    assertEquals(40f, v.value(1, 0, 1));
    assertEquals(20f, v.value(1, 1, 1));
    assertEquals(100f, v.value(2, 0, 0), "bytes read");
    assertEquals(4000f, v.value(3, 0, 1), "bytes written");
    assertEquals("t-2", v.tablets().get(v.tabletAt()[1 * 2 + 1]));
  }

  @Test
  void aTabletSplitLaterSpreadsItsEarlierLoadOverItsChildrenBands() {
    LoadHistory h = new LoadHistory(1000, 10);
    Directory before = table();
    h.add(before, report("t-1", 0, 100), 0);
    // t-1 split at "k" into t-5 and t-6.
    Directory after = Directory.EMPTY.withTable(new TableInfo("t", Map.of(), 0), List.of(
        TabletInfo.empty("t", "t-5", new byte[0], b("k")), TabletInfo.empty("t", "t-6", b("k"), new byte[0])), 7);
    h.add(after, report("t-6", 0, 30), 1000);
    LoadHistory.View v = h.view(after, "t", 1_000_000);
    assertEquals(2, v.bandStarts().size());
    assertEquals(50f, v.value(1, 0, 0), "the parent's load, split evenly over the bands it covered");
    assertEquals(50f, v.value(1, 0, 1));
    assertEquals(0f, v.value(1, 1, 0));
    assertEquals(30f, v.value(1, 1, 1));
  }

  @Test
  void oldColumnsAndTheirTabletsAreForgotten() {
    LoadHistory h = new LoadHistory(1000, 2);
    Directory d = table("m");
    for (int s = 0; s < 5; s++) {
      h.add(d, report("t-1", s, 0), s * 1000L);
    }
    LoadHistory.View v = h.view(d, "t", 1_000_000);
    assertEquals(List.of(3000L, 4000L), v.columnStarts());
    assertEquals(3f, v.value(0, 0, 0));
  }

  @Test
  void manyTabletsAreThinnedToABoundedNumberOfBands() {
    String[] bounds = new String[500];
    for (int i = 0; i < bounds.length; i++) {
      bounds[i] = String.format("k%04d", i);
    }
    Directory d = table(bounds);
    LoadHistory h = new LoadHistory(1000, 3);
    for (TabletInfo t : d.tabletsOf("t")) {
      h.add(d, report(t.id(), 0, 1), 0);
    }
    LoadHistory.View v = h.view(d, "t", 1_000_000);
    assertEquals(LoadHistory.MAX_BANDS, v.bandStarts().size());
    float total = 0;
    for (int band = 0; band < LoadHistory.MAX_BANDS; band++) {
      total += v.value(1, 0, band);
    }
    assertEquals(501f, total, 0.01f, "no load is lost when bands are thinned");
  }
}
