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

  /** Open tablets move with the move's steps: prepared (compacted) on n1, then opened on n2. */
  @Test
  void openTabletsTheBalancerMovesGoThroughTheMovesSteps() {
    Placements.Plan plan = placements().onTick(fourOnN1(true), LOG);
    assertEquals(List.of(), plan.events(), "an open tablet is not placed by a change of owner");
    assertEquals(2, plan.moves().size(), plan.moves().toString());
    assertTrue(plan.moves().stream().allMatch(m -> m.from().equals("n1") && m.to().equals("n2")), plan.toString());
  }
}
