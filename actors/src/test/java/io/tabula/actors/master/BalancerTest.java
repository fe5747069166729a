package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The balancer's choices on directories made up for the purpose (it is a pure function). */
class BalancerTest {
  /** A table of tablets t-1..t-n, owned as {@code owners} says in order. */
  private static Directory placed(String... owners) {
    List<TabletInfo> tablets = new ArrayList<>();
    Map<String, TabletPlacement> p = new TreeMap<>();
    for (int i = 0; i < owners.length; i++) {
      byte[] start = i == 0 ? new byte[0] : ("k" + i).getBytes(StandardCharsets.UTF_8);
      byte[] end = i == owners.length - 1 ? new byte[0] : ("k" + (i + 1)).getBytes(StandardCharsets.UTF_8);
      String id = "t-" + (i + 1);
      tablets.add(TabletInfo.empty("t", id, start, end));
      p.put(id, TabletPlacement.UNASSIGNED.servedBy(owners[i]));
    }
    return Directory.EMPTY.withTable(new TableInfo("t", Map.of(), 0), tablets, owners.length + 1).withPlacements(p);
  }

  private static Map<String, Integer> countsAfter(Directory d, List<Balancer.Move> moves) {
    Map<String, Integer> c = new TreeMap<>(d.tabletsPerNode());
    for (Balancer.Move m : moves) {
      c.merge(m.from(), -1, Integer::sum);
      c.merge(m.to(), 1, Integer::sum);
    }
    return c;
  }

  @Test
  void aNewNodeGetsItsShareByCount() {
    Directory d = placed("a", "b", "c", "a", "b", "c", "a", "b");
    List<Balancer.Move> moves = Balancer.plan(d, List.of("a", "b", "c", "d"), Map.of(), Set.of(), 10);
    assertEquals(Map.of("a", 2, "b", 2, "c", 2, "d", 2), countsAfter(d, moves));
    assertTrue(moves.stream().allMatch(m -> m.to().equals("d")), moves.toString());
  }

  @Test
  void atMostTheBudgetMovesAndNotTheFrozenTablets() {
    Directory d = placed("a", "a", "a", "a", "b");
    List<Balancer.Move> moves = Balancer.plan(d, List.of("a", "b"), Map.of(), Set.of("t-1", "t-2"), 1);
    assertEquals(1, moves.size());
    assertFalse(Set.of("t-1", "t-2").contains(moves.get(0).tabletId()), moves.toString());
    assertEquals(List.of(), Balancer.plan(d, List.of("a", "b"), Map.of(), Set.of("t-1", "t-2", "t-3", "t-4"), 5),
        "nothing movable");
  }

  @Test
  void anEvenClusterStaysPut() {
    Directory d = placed("a", "b", "c", "a", "b", "c", "a");
    Map<String, Double> load = new HashMap<>();
    for (int i = 1; i <= 7; i++) {
      load.put("t-" + i, 100.0);
    }
    assertEquals(List.of(), Balancer.plan(d, List.of("a", "b", "c"), load, Set.of(), 5));
  }

  @Test
  void countsFirstMovingTheColdestTablet() {
    Directory d = placed("a", "a", "a", "b");
    List<Balancer.Move> moves = Balancer.plan(d, List.of("a", "b"), Map.of("t-1", 500.0, "t-2", 5.0, "t-3", 900.0),
        Set.of(), 1);
    assertEquals(List.of(new Balancer.Move("t-2", "a", "b")), moves);
  }

  @Test
  void withCountsWithinOneTheHotTabletsSpread() {
    // a holds three tablets, two of them hot; b holds two cold ones. By count they are even
    // enough; by load a carries far more, and moving one hot tablet evens it out.
    Directory d = placed("a", "a", "a", "b", "b");
    Map<String, Double> load = Map.of("t-1", 1000.0, "t-2", 1000.0, "t-3", 1.0, "t-4", 1.0, "t-5", 1.0);
    List<Balancer.Move> moves = Balancer.plan(d, List.of("a", "b"), load, Set.of(), 5);
    assertEquals(1, moves.size(), moves.toString());
    assertTrue(Set.of("t-1", "t-2").contains(moves.get(0).tabletId()), "a hot tablet moves: " + moves);
    assertEquals("b", moves.get(0).to());
  }
}
