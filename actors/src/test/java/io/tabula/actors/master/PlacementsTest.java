package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.MemberStatus;
import org.junit.jupiter.api.Test;

/**
 * What the master's periodic look decides for balancing ({@link Placements#onTick}), over a
 * directory and a membership the test gives: two Up nodes, n1 owning four tablets of one table
 * and n2 none, so the balancer moves two.
 */
class PlacementsTest {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PlacementsTest.class);

  private static ClusterNodes.NodeInfo up(String name, int uid) {
    return new ClusterNodes.NodeInfo(name, new Address("pekko", "tabula", "127.0.0.1", 7000 + uid), uid, "", "",
        name + ".life" + uid, MemberStatus.up(), true);
  }

  /** Table t of four tablets, all on n1; each with n1's log when {@code open}, none otherwise. */
  private static Directory fourOnN1(boolean open) {
    List<TabletInfo> tablets = new ArrayList<>();
    Map<String, TabletPlacement> placements = new HashMap<>();
    byte[][] bounds = {new byte[0], {'d'}, {'h'}, {'p'}, new byte[0]};
    for (int i = 1; i <= 4; i++) {
      tablets.add(TabletInfo.empty("t", "t-" + i, bounds[i - 1], bounds[i]));
      placements.put("t-" + i, new TabletPlacement("n1", TabletPlacement.State.SERVING, "",
          open ? List.of("n1.life1") : List.of()));
    }
    return Directory.EMPTY.withTable(new TableInfo("t", Map.of(), 1), tablets, 5).withPlacements(placements);
  }

  private static Placements placements() {
    List<ClusterNodes.NodeInfo> members = List.of(up("n1", 1), up("n2", 2));
    return new Placements(() -> members, id -> null, MasterSettings.DEFAULTS);
  }

  /**
   * Closed tablets (no log names them: never opened, or closed cleanly) that the balancer moves
   * are placed on the other node by one change of owner: a move's steps would open each on n1
   * to compact it, then again on n2.
   */
  @Test
  void closedTabletsTheBalancerMovesArePlacedInOneChangeOfOwner() {
    Placements.Plan plan = placements().onTick(fourOnN1(false), LOG);
    assertEquals(List.of(), plan.moves(), "no move's steps for a closed tablet");
    assertEquals(1, plan.events().size(), plan.events().toString());
    Master.TabletsAssigned assigned = (Master.TabletsAssigned) plan.events().get(0);
    assertEquals(2, assigned.owners().size(), assigned.toString());
    assertTrue(assigned.owners().values().stream().allMatch("n2"::equals), assigned.toString());
  }

  /**
   * Two small, cold neighbours on one node merge only when both are open (a log names them):
   * a merge closes both cleanly and writes the child's manifest from their own, so a closed
   * tablet would be opened only to be closed again, and a never-opened one has no manifest.
   */
  @Test
  void smallColdNeighboursMergeOnlyWhenBothAreOpen() {
    for (boolean rightOpen : new boolean[] {true, false}) {
      List<TabletInfo> tablets = List.of(TabletInfo.empty("t", "t-1", new byte[0], new byte[] {'m'}),
          TabletInfo.empty("t", "t-2", new byte[] {'m'}, new byte[0]));
      Directory d = Directory.EMPTY.withTable(new TableInfo("t", Map.of(), 1), tablets, 3).withPlacements(Map.of(
          "t-1", new TabletPlacement("n1", TabletPlacement.State.SERVING, "", List.of("n1.life1")),
          "t-2", new TabletPlacement("n1", TabletPlacement.State.SERVING, "",
              rightOpen ? List.of("n1.life1") : List.of())));
      long[] clock = {1_000_000_000L};
      List<ClusterNodes.NodeInfo> members = List.of(up("n1", 1));
      Placements p = new Placements(() -> members, id -> null, MasterSettings.DEFAULTS, () -> clock[0]);
      for (String id : List.of("t-1", "t-2")) {
        p.load(new Master.ReportLoad(id, 0, 0, 1_000, 2_000_000_000L, 0, 0)); // cold, 1 KB
      }
      clock[0] += MasterSettings.DEFAULTS.mergeColdFor().toNanos() + Placements.MERGE_LOOK_EVERY_NANOS;
      Placements.Plan plan = p.onTick(d, LOG);
      if (rightOpen) {
        assertEquals(1, plan.merges().size(), plan.toString());
        assertEquals("t-1", plan.merges().get(0).leftId());
        assertEquals("t-2", plan.merges().get(0).rightId());
      } else {
        assertEquals(List.of(), plan.merges(), "a closed tablet is not merged: " + plan);
      }
    }
  }

  /**
   * A merge this master did not start (an earlier master's) is given up, once, from its left
   * tablet: found by the tablet after it, which is being merged into the same child.
   */
  @Test
  void aMergeAnEarlierMasterStartedIsGivenUpFromItsLeftTablet() {
    Directory d = fourOnN1(true);
    Map<String, TabletPlacement> merging = new HashMap<>(d.placement());
    merging.put("t-2", d.placementOf("t-2").merging("t-child"));
    merging.put("t-3", d.placementOf("t-3").merging("t-child"));
    List<ClusterNodes.NodeInfo> members = List.of(up("n1", 1));
    Placements.Plan plan = new Placements(() -> members, id -> null, MasterSettings.DEFAULTS)
        .onTick(d.withPlacements(merging), LOG);
    assertEquals(List.of(new Master.MergeAbandoned("t-2", "t-3")), plan.events());
  }

  /** Open tablets move with the move's steps: prepared (compacted) on n1, then opened on n2. */
  @Test
  void openTabletsTheBalancerMovesGoThroughTheMovesSteps() {
    Placements.Plan plan = placements().onTick(fourOnN1(true), LOG);
    assertEquals(List.of(), plan.events(), "an open tablet is not placed by a change of owner");
    assertEquals(2, plan.moves().size(), plan.moves().toString());
    assertTrue(plan.moves().stream().allMatch(m -> m.from().equals("n1") && m.to().equals("n2")), plan.toString());
  }
}
