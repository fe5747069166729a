package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.MemberStatus;
import org.junit.jupiter.api.Test;

/**
 * When the master fences a node, and when it does not. The membership is a stand-in list (a
 * real cluster is in the multi-JVM NodeDeathTest); fencing completes when the test says, as
 * the file I/O that does it would later.
 */
class FencesTest {
  private static final long SECOND = 1_000_000_000L;

  /** A stand-in membership that records what the master asked of it. */
  private static final class Nodes implements MasterNodes {
    List<ClusterNodes.NodeInfo> members = new ArrayList<>();
    final List<String> fenceAsked = new ArrayList<>();
    final List<CompletableFuture<Void>> fences = new ArrayList<>();
    final List<String> downed = new ArrayList<>();
    java.util.Set<String> gone = java.util.Set.of();

    @Override
    public java.util.Set<String> gone() {
      return gone;
    }

    @Override
    public List<ClusterNodes.NodeInfo> all() {
      return members;
    }

    @Override
    public String self() {
      return "n1";
    }

    final List<java.util.Set<String>> spared = new ArrayList<>();

    @Override
    public CompletionStage<Void> fence(String node, java.util.Set<String> spare) {
      fenceAsked.add(node);
      spared.add(spare);
      CompletableFuture<Void> f = new CompletableFuture<>();
      fences.add(f);
      return f;
    }

    @Override
    public void down(ClusterNodes.NodeInfo node) {
      downed.add(node.name());
    }
  }

  private static ClusterNodes.NodeInfo node(String name, long uid, boolean reachable) {
    return new ClusterNodes.NodeInfo(name, new Address("pekko", "tabula", "127.0.0.1", 7000 + (int) uid), uid, "",
        "", name + ".life" + uid, MemberStatus.up(), reachable);
  }

  @Test
  void aNodeUnreachableLongEnoughOnTheMajoritySideIsFencedThenDowned() {
    Nodes nodes = new Nodes();
    Fences fences = new Fences(nodes, Duration.ofSeconds(2));
    nodes.members = List.of(node("n1", 1, true), node("n2", 2, true), node("n3", 3, false), node("n4", 4, true));
    fences.onTick(nodes.members, 0);
    fences.onTick(nodes.members, SECOND);
    assertEquals(List.of(), nodes.fenceAsked, "not before fence-after has passed");
    fences.onTick(nodes.members, 2 * SECOND);
    fences.onTick(nodes.members, 3 * SECOND);
    assertEquals(List.of("n3"), nodes.fenceAsked, "fenced once");
    assertFalse(fences.isFenced("n3"), "not fenced before the fence is durable");
    assertEquals(List.of(), nodes.downed, "downed only once fenced");
    nodes.fences.get(0).complete(null);
    assertTrue(fences.isFenced("n3"));
    assertEquals(List.of("n3"), nodes.downed);
  }

  @Test
  void withoutAMajorityNothingIsFenced() {
    Nodes nodes = new Nodes();
    Fences fences = new Fences(nodes, Duration.ofSeconds(2));
    nodes.members = List.of(node("n1", 1, true), node("n2", 2, true), node("n3", 3, false), node("n4", 4, false));
    for (int s = 0; s < 60; s++) {
      fences.onTick(nodes.members, s * SECOND);
    }
    assertEquals(List.of(), nodes.fenceAsked, "two of four reachable is no majority: the resolver decides");
  }

  @Test
  void aNodeThatBecomesReachableAgainInTimeIsNotFenced() {
    Nodes nodes = new Nodes();
    Fences fences = new Fences(nodes, Duration.ofSeconds(2));
    List<ClusterNodes.NodeInfo> away = List.of(node("n1", 1, true), node("n2", 2, true), node("n3", 3, false));
    List<ClusterNodes.NodeInfo> back = List.of(node("n1", 1, true), node("n2", 2, true), node("n3", 3, true));
    fences.onTick(away, 0);
    fences.onTick(back, SECOND);
    fences.onTick(away, 2 * SECOND);
    fences.onTick(away, 3 * SECOND);
    assertEquals(List.of(), nodes.fenceAsked, "the unreachable time starts again after it was reachable");
    fences.onTick(away, 4 * SECOND);
    assertEquals(List.of("n3"), nodes.fenceAsked);
  }

  @Test
  void aFailedFenceIsTriedAgainAndANewStartOfTheNodeIsNotFenced() {
    Nodes nodes = new Nodes();
    Fences fences = new Fences(nodes, Duration.ofSeconds(2));
    List<ClusterNodes.NodeInfo> away = List.of(node("n1", 1, true), node("n2", 2, true), node("n3", 3, false));
    fences.onTick(away, 0);
    fences.onTick(away, 2 * SECOND);
    nodes.fences.get(0).completeExceptionally(new java.io.IOException("disk full"));
    assertFalse(fences.isFenced("n3"));
    fences.onTick(away, 3 * SECOND);
    assertEquals(List.of("n3", "n3"), nodes.fenceAsked, "asked again after a failure");
    nodes.fences.get(1).complete(null);
    assertTrue(fences.isFenced("n3"));
    fences.onTick(List.of(node("n1", 1, true), node("n2", 2, true), node("n3", 33, true)), 10 * SECOND);
    assertFalse(fences.isFenced("n3"), "n3 started again (another uid): its new life is not fenced");
  }

  /**
   * Fencing is by life, not by name (docs/fencing.md): a decision about a node's earlier life
   * (its owner gone from the membership, or an unreachable member) spares the commit log of a
   * live member started again under that name, which would otherwise find its new log fenced
   * and stop.
   */
  @Test
  void aDecisionAboutAnEarlierLifeSparesTheLogOfTheNodesLiveStart() {
    Nodes nodes = new Nodes();
    Fences fences = new Fences(nodes, Duration.ofSeconds(2));
    nodes.members = List.of(node("n1", 1, true), node("n2", 2, true), node("n3", 33, true));
    fences.fenceAbsent("n3");
    assertEquals(List.of("n3"), nodes.fenceAsked);
    assertEquals(java.util.Set.of("n3.life33"), nodes.spared.get(0), "the live n3's log is spared");

    Nodes others = new Nodes();
    Fences fast = new Fences(others, Duration.ofSeconds(2));
    others.members = List.of(node("n1", 1, true), node("n2", 2, true), node("n3", 3, false), node("n4", 4, true));
    fast.onTick(others.members, 0);
    fast.onTick(others.members, 2 * SECOND);
    assertEquals(List.of("n3"), others.fenceAsked);
    assertEquals(java.util.Set.of(), others.spared.get(0), "the unreachable member's own life is fenced");
  }

  @Test
  void aNodeGoneFromTheMembershipIsFencedOnRequest() {
    Nodes nodes = new Nodes();
    Fences fences = new Fences(nodes, Duration.ofSeconds(2));
    fences.fenceAbsent("n5");
    fences.fenceAbsent("n5");
    assertEquals(List.of("n5"), nodes.fenceAsked);
    nodes.fences.get(0).complete(null);
    assertTrue(fences.isFenced("n5"));
    assertEquals(List.of(), nodes.downed, "a node gone from the membership is not downed");
  }

  /**
   * A tablet's owner that this node saw downed or removed (a frozen master's node, removed
   * before the new master started) is fenced at the master's first look, and its tablets placed
   * once that is done, without waiting for sharding to ask or for absent-for. An owner never
   * seen here (a whole cluster starting again) is waited for.
   */
  @Test
  void anOwnerSeenGoneIsFencedAndItsTabletsPlacedAtOnceButOneNeverSeenIsWaitedFor() {
    Nodes nodes = new Nodes();
    nodes.members = List.of(node("n2", 2, true), node("n3", 3, true));
    Placements placements = new Placements(nodes, id -> null, MasterSettings.DEFAULTS);
    TableInfo table = new TableInfo("t", java.util.Map.of(), 1);
    Directory d = Directory.EMPTY.withTable(table, List.of(TabletInfo.empty("t", "t-1", new byte[0], new byte[] {'m'}),
        TabletInfo.empty("t", "t-2", new byte[] {'m'}, new byte[0])), 3)
        .withPlacements(java.util.Map.of(
            "t-1", new TabletPlacement("n1", TabletPlacement.State.SERVING, "", List.of("n1.a")),
            "t-2", new TabletPlacement("n4", TabletPlacement.State.SERVING, "", List.of("n4.a"))));
    org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FencesTest.class);

    assertTrue(placements.onTick(d, log).events().isEmpty(), "n1 and n4 were never seen gone: waited for");
    assertEquals(List.of(), nodes.fenceAsked);

    nodes.gone = java.util.Set.of("n1");
    assertTrue(placements.onTick(d, log).events().isEmpty(), "fencing first");
    assertEquals(List.of("n1"), nodes.fenceAsked);
    nodes.fences.get(0).complete(null);
    List<Master.Event> placed = placements.onTick(d, log).events();
    assertEquals(1, placed.size(), placed.toString());
    Master.TabletsAssigned assigned = (Master.TabletsAssigned) placed.get(0);
    assertEquals(java.util.Set.of("t-1"), assigned.owners().keySet(), "only n1's tablet, not n4's");
    assertTrue(java.util.Set.of("n2", "n3").contains(assigned.owners().get("t-1")));
  }
}
