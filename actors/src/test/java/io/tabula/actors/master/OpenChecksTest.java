package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.MemberStatus;
import org.junit.jupiter.api.Test;

/**
 * When a tablet may open on a node (docs/fencing.md, "Before a tablet opens"): only once every
 * commit-log folder its placement names, other than the opener's own, is fenced or released by
 * its live writer. The membership is a stand-in list; the fences complete when the test says,
 * as the file I/O that makes them would later; time is the test's.
 */
class OpenChecksTest {
  private static final long SECOND = 1_000_000_000L;

  private static final class Nodes implements MasterNodes {
    List<ClusterNodes.NodeInfo> members = new ArrayList<>();
    final List<String> fenceAsked = new ArrayList<>();
    final List<CompletableFuture<Void>> fences = new ArrayList<>();

    @Override
    public List<ClusterNodes.NodeInfo> all() {
      return members;
    }

    /** What each node answers when asked whether it holds a tablet (true if not set). */
    final Map<String, Boolean> holding = new java.util.concurrent.ConcurrentHashMap<>();
    final List<String> asked = new ArrayList<>();

    @Override
    public CompletionStage<Boolean> holds(ClusterNodes.NodeInfo node, String tabletId) {
      asked.add(node.name() + " " + tabletId);
      return CompletableFuture.completedFuture(holding.getOrDefault(node.name() + " " + tabletId, true));
    }

    @Override
    public CompletionStage<Void> fenceLogs(Collection<String> folders) {
      fenceAsked.addAll(folders);
      CompletableFuture<Void> f = new CompletableFuture<>();
      fences.add(f);
      return f;
    }
  }

  private static ClusterNodes.NodeInfo node(String name, String log, MemberStatus status, boolean reachable) {
    return new ClusterNodes.NodeInfo(name, new Address("pekko", "tabula", "127.0.0.1", 7000 + name.hashCode() % 100),
        name.hashCode(), "", "", log, status, reachable);
  }

  private final AtomicLong now = new AtomicLong();
  private final Nodes nodes = new Nodes();
  private final OpenChecks checks = new OpenChecks(nodes, Duration.ofSeconds(10), now::get);

  /**
   * The source of a move frozen in its hand-over, a node downed or removed, an earlier life: a
   * folder whose writer is not a live, reachable member is fenced before the tablet opens, and
   * the open waits until the fence is durable (MovingSourceFrozenTest shows the process-level
   * hole this closes).
   */
  @Test
  void aFolderWhoseWriterIsNotALiveReachableMemberIsFencedBeforeTheTabletOpens() {
    nodes.members = List.of(node("n1", "n1.b", MemberStatus.up(), false), node("n2", "n2.a", MemberStatus.up(), true),
        node("n3", "n3.a", MemberStatus.down(), true), node("n5", "n5.a", MemberStatus.up(), true));
    List<String> logs = List.of("n1.b", "n3.a", "n4.a");
    assertEquals(logs, checks.blocking("t-1", logs, "n2.a"));
    assertEquals(logs, nodes.fenceAsked, "unreachable, downed and absent writers are all fenced at once");
    assertEquals(logs, checks.blocking("t-1", logs, "n2.a"), "still blocked until the fences are durable");
    assertEquals(3, nodes.fenceAsked.size(), "a fence under way is not asked again");
    nodes.fences.get(0).complete(null);
    nodes.fences.get(1).complete(null);
    assertEquals(List.of("n4.a"), checks.blocking("t-1", logs, "n2.a"));
    nodes.fences.get(2).completeExceptionally(new java.io.IOException("disk full"));
    assertEquals(List.of("n4.a"), checks.blocking("t-1", logs, "n2.a"), "a failed fence is asked again");
    assertEquals(4, nodes.fenceAsked.size());
    nodes.fences.get(3).complete(null);
    assertEquals(List.of(), checks.blocking("t-1", logs, "n2.a"));
  }

  /**
   * A live writer's folder (a hand-over whose close report is on its way) is waited for, not
   * fenced: released by its report, the tablet opens; never reported within the wait, it is
   * fenced (its node then stops) and the tablet opens once that is durable.
   */
  @Test
  void aLiveWritersFolderIsWaitedForUntilReleasedAndFencedOnlyAfterTheWait() {
    nodes.members = List.of(node("n1", "n1.a", MemberStatus.up(), true), node("n2", "n2.a", MemberStatus.up(), true));
    assertEquals(List.of("n1.a"), checks.blocking("t-1", List.of("n1.a", "n2.a"), "n2.a"),
        "the opener's own folder never blocks it");
    now.addAndGet(5 * SECOND);
    assertEquals(List.of("n1.a"), checks.blocking("t-1", List.of("n1.a"), "n2.a"));
    assertEquals(List.of(), nodes.fenceAsked, "not fenced within the wait");
    checks.released("t-1", "n1.a");
    assertEquals(List.of(), checks.blocking("t-1", List.of("n1.a"), "n2.a"), "released: the tablet opens");
    assertEquals(List.of("n1.a"), checks.blocking("t-2", List.of("n1.a"), "n2.a"),
        "a release is for one tablet only");
    now.addAndGet(10 * SECOND);
    checks.blocking("t-2", List.of("n1.a"), "n2.a");
    assertEquals(List.of("n1.a"), nodes.fenceAsked, "never reported within the wait: fenced");
    nodes.fences.get(0).complete(null);
    assertEquals(List.of(), checks.blocking("t-2", List.of("n1.a"), "n2.a"));
  }

  /**
   * A live writer that no longer holds the tablet lets it open at once, without a fence: its
   * close report was lost (a master failing over drops what its proxy buffers, and a new master
   * never heard it), or the tablet is a child of a split it never opened.
   */
  @Test
  void aLiveWriterThatNoLongerHoldsTheTabletReleasesItWithoutAFence() {
    nodes.members = List.of(node("n1", "n1.a", MemberStatus.up(), true), node("n2", "n2.a", MemberStatus.up(), true));
    nodes.holding.put("n1 t-1", false);
    assertEquals(List.of("n1.a"), checks.blocking("t-1", List.of("n1.a"), "n2.a"), "asked first");
    assertEquals(List.of("n1 t-1"), nodes.asked);
    assertEquals(List.of(), checks.blocking("t-1", List.of("n1.a"), "n2.a"), "it let go: the tablet opens");
    assertEquals(List.of(), nodes.fenceAsked, "and n1 is not fenced");
  }

  /**
   * An Up writer cut off from the master is fenced only while the master's side holds a
   * majority (as the fast path): a master on the minority side waits for the split-brain
   * resolver instead of stopping the nodes of the majority.
   */
  @Test
  void anUnreachableWriterIsFencedOnlyFromTheMajoritySide() {
    nodes.members = List.of(node("n1", "n1.a", MemberStatus.up(), true), node("n2", "n2.a", MemberStatus.up(), false),
        node("n3", "n3.a", MemberStatus.up(), false));
    assertEquals(List.of("n2.a"), checks.blocking("t-1", List.of("n2.a"), "n1.a"));
    assertEquals(List.of(), nodes.fenceAsked, "one of three reachable is no majority");
    nodes.members = List.of(node("n1", "n1.a", MemberStatus.up(), true), node("n2", "n2.a", MemberStatus.up(), false),
        node("n3", "n3.a", MemberStatus.up(), true));
    checks.blocking("t-1", List.of("n2.a"), "n1.a");
    assertEquals(List.of("n2.a"), nodes.fenceAsked, "two of three is");
  }

  /**
   * A release holds until its writer opens the tablet again: a writer that released a tablet
   * (a failed close) and serves it again later is waited for, or fenced, like any other.
   */
  @Test
  void aReleaseEndsWhenItsWriterOpensTheTabletAgain() {
    nodes.members = List.of(node("n1", "n1.a", MemberStatus.up(), false), node("n2", "n2.a", MemberStatus.up(), true),
        node("n3", "n3.a", MemberStatus.up(), true));
    checks.released("t-1", "n1.a");
    assertEquals(List.of(), checks.blocking("t-1", List.of("n1.a"), "n2.a"));
    checks.opened("t-1", "n1.a");
    assertEquals(List.of("n1.a"), checks.blocking("t-1", List.of("n1.a"), "n2.a"));
    assertEquals(List.of("n1.a"), nodes.fenceAsked, "n1, now unreachable, is fenced before the tablet opens on n2");
  }

  @Test
  void whatNoPlacementNamesIsForgotten() {
    checks.released("t-1", "n1.a");
    TableInfo table = new TableInfo("t", Map.of(), 1);
    Directory d = Directory.EMPTY.withTable(table, List.of(TabletInfo.empty("t", "t-1", new byte[0], new byte[0])), 2)
        .withPlacements(Map.of("t-1", new TabletPlacement("n2", TabletPlacement.State.SERVING, "", List.of())));
    checks.retain(d);
    nodes.members = List.of(node("n1", "n1.a", MemberStatus.up(), true));
    assertEquals(List.of("n1.a"), checks.blocking("t-1", List.of("n1.a"), "n2.a"),
        "a release no placement needs any more is gone");
  }
}
