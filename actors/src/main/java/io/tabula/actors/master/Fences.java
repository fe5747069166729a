package io.tabula.actors.master;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.cluster.MemberStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's fencing of nodes taken for dead (docs/fencing.md). Before a node's tablets are
 * placed elsewhere, every commit-log folder of that node is fenced, so the node, if it still
 * runs, acknowledges nothing more and recovery reads every write it ever acknowledged.
 *
 * <p>Two ways lead here. A node unreachable for {@code fenceAfter}, while this master's side
 * of the cluster holds a strict majority of the members, is fenced and then downed at once:
 * the fast path, which does not wait for the split-brain resolver's stable-after. A node gone
 * from the membership for {@code absent-for} (the slow path, for clusters where no side holds
 * a majority) is fenced before its tablets are placed.
 *
 * <p>Owned by the master's thread, except the fenced starts ({@link #fenced}), which the
 * fencing's completion adds to from an I/O thread.
 */
final class Fences {
  private static final Logger LOG = LoggerFactory.getLogger(Fences.class);
  private final MasterNodes nodes;
  private final Duration fenceAfter;
  /** When each node was first seen unreachable (the master's nanoTime), by uid. */
  private final Map<Long, Long> unreachableSince = new HashMap<>();
  /** Fencing under way or done, by node name: the uid of the start it was for. */
  private final Map<String, Long> requested = new ConcurrentHashMap<>();
  /** Fencing done, by node name: the uid of the start it was for (0: a node gone from the membership). */
  private final Map<String, Long> fenced = new ConcurrentHashMap<>();

  Fences(MasterNodes nodes, Duration fenceAfter) {
    this.nodes = nodes;
    this.fenceAfter = fenceAfter;
  }

  /** Whether {@code node}'s logs are fenced: its tablets may be placed elsewhere and recovered. */
  boolean isFenced(String node) {
    return fenced.containsKey(node);
  }

  /**
   * At each tick: forgets fences of nodes started again since (a member of that name, with
   * another uid, that is reachable), then fences and downs nodes unreachable for
   * {@code fenceAfter} while this side holds a majority.
   */
  void onTick(List<ClusterNodes.NodeInfo> all, long now) {
    for (ClusterNodes.NodeInfo n : all) {
      Long uid = fenced.get(n.name());
      if (uid != null && uid != n.uid() && n.reachable() && n.status() != MemberStatus.down()
          && n.status() != MemberStatus.removed()) {
        fenced.remove(n.name());
        requested.remove(n.name());
      }
    }
    List<ClusterNodes.NodeInfo> counted = all.stream()
        .filter(n -> n.status() != MemberStatus.down() && n.status() != MemberStatus.removed()).toList();
    long reachable = counted.stream().filter(ClusterNodes.NodeInfo::reachable).count();
    unreachableSince.keySet().retainAll(counted.stream().filter(n -> !n.reachable())
        .map(ClusterNodes.NodeInfo::uid).toList());
    if (fenceAfter.isZero() || reachable * 2 <= counted.size()) {
      return; // no majority here: the split-brain resolver decides, and the slow path follows
    }
    for (ClusterNodes.NodeInfo n : counted) {
      if (n.reachable() || n.name().equals(nodes.self())) {
        continue;
      }
      long since = unreachableSince.computeIfAbsent(n.uid(), k -> now);
      if (now - since >= fenceAfter.toNanos()) {
        fence(n.name(), n.uid(), () -> nodes.down(n));
      }
    }
  }

  /** Fences {@code node} (gone from the membership) unless that is under way or done. */
  void fenceAbsent(String node) {
    fence(node, 0L, () -> {});
  }

  /**
   * Fences the lives of {@code node} but those of its live members other than member {@code uid}
   * (0: a node gone from the membership): a decision about one life never fences another.
   */
  private void fence(String node, long uid, Runnable then) {
    if (requested.putIfAbsent(node, uid) != null) {
      return;
    }
    Set<String> spare = new HashSet<>();
    for (ClusterNodes.NodeInfo n : nodes.all()) {
      if (n.name().equals(node) && n.uid() != uid && n.status() != MemberStatus.down()
          && n.status() != MemberStatus.removed() && !n.log().isEmpty()) {
        spare.add(n.log());
      }
    }
    LOG.warn("fencing node {}: it is taken for dead, so its commit logs are fenced before its tablets are "
        + "placed on other nodes{}", node, spare.isEmpty() ? "" : " (not the log " + spare + " of its live start)");
    nodes.fence(node, spare).whenComplete((ok, err) -> {
      if (err != null) {
        requested.remove(node, uid);
        LOG.warn("fencing node {} failed; trying again at the next tick: {}", node, err.toString());
        return;
      }
      fenced.put(node, uid);
      then.run();
    });
  }
}
