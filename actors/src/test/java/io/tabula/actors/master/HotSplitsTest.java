package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class HotSplitsTest {
  private static final long S = 1_000_000_000L;

  /** Table t of {@code n} tablets t-1.., all served by node a. */
  private static Directory tablets(int n) {
    List<TabletInfo> l = new ArrayList<>();
    byte[] start = new byte[0];
    Map<String, TabletPlacement> p = new TreeMap<>();
    for (int i = 1; i <= n; i++) {
      byte[] end = i == n ? new byte[0] : ("k" + i).getBytes(StandardCharsets.UTF_8);
      l.add(TabletInfo.empty("t", "t-" + i, start, end));
      p.put("t-" + i, TabletPlacement.UNASSIGNED.servedBy("a"));
      start = end;
    }
    return Directory.EMPTY.withTable(new TableInfo("t", Map.of(), 0), l, n + 1).withPlacements(p);
  }

  private static Map<String, double[]> ops(double... perTablet) {
    Map<String, double[]> m = new TreeMap<>();
    for (int i = 0; i < perTablet.length; i++) {
      m.put("t-" + (i + 1), new double[] {perTablet[i], 0, 0, 0});
    }
    return m;
  }

  @Test
  void aTabletHotForLongEnoughIsAskedOnce() {
    HotSplits h = new HotSplits(100, 0.5, 10 * S);
    Directory d = tablets(3);
    Map<String, double[]> load = ops(5000, 100, 100);
    assertEquals(List.of(), h.due(d, load, 2, 0), "not hot for long enough yet");
    assertEquals(List.of(), h.due(d, load, 2, 9 * S));
    assertEquals(List.of("t-1"), h.due(d, load, 2, 10 * S));
    assertEquals(List.of(), h.due(d, load, 2, 20 * S), "asked already; it may still be splitting");
    assertEquals(List.of("t-1"), h.due(d, load, 2, 10 * S + HotSplits.ASK_AGAIN_AFTER * 10 * S),
        "still there long after: asked again");
  }

  @Test
  void coolingDownStartsTheWaitAgain() {
    HotSplits h = new HotSplits(100, 0.5, 10 * S);
    Directory d = tablets(2);
    h.due(d, ops(5000, 100), 2, 0);
    h.due(d, ops(50, 100), 2, 5 * S);
    assertEquals(List.of(), h.due(d, ops(5000, 100), 2, 11 * S));
    assertEquals(List.of("t-1"), h.due(d, ops(5000, 100), 2, 21 * S));
  }

  @Test
  void evenLoadOrOneNodeOrLowRatesSplitNothing() {
    HotSplits h = new HotSplits(100, 0.5, S);
    Directory d = tablets(4);
    for (long t = 0; t <= 5; t++) {
      // Four tablets of a quarter each on two nodes: each is half a node's share, not more.
      assertEquals(List.of(), h.due(d, ops(1000, 1000, 1000, 1000), 2, t * S));
    }
    HotSplits one = new HotSplits(100, 0.5, S);
    for (long t = 0; t <= 5; t++) {
      assertEquals(List.of(), one.due(d, ops(9000, 10, 10, 10), 1, t * S), "on one node a split moves nothing");
    }
    HotSplits slow = new HotSplits(1000, 0.5, S);
    for (long t = 0; t <= 5; t++) {
      assertEquals(List.of(), slow.due(d, ops(900, 1, 1, 1), 3, t * S), "under the least rate");
    }
  }

  @Test
  void atMostTwoAreAskedPerTickHottestFirst() {
    HotSplits h = new HotSplits(100, 0.1, S);
    Directory d = tablets(4);
    Map<String, double[]> load = ops(3000, 4000, 5000, 10);
    h.due(d, load, 2, 0);
    assertEquals(List.of("t-3", "t-2"), h.due(d, load, 2, S));
    assertEquals(List.of("t-1"), h.due(d, load, 2, 2 * S));
  }
}
