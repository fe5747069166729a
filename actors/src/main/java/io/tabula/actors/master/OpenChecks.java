package io.tabula.actors.master;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.apache.pekko.cluster.MemberStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What must hold before a tablet opens on a node (docs/fencing.md, "Before a tablet opens"):
 * every commit-log folder its placement names, other than the opener's own, is either
 * <ul>
 *   <li>fenced: its writer can acknowledge nothing more, and a recovery that reads the folder
 *       afterwards sees every write it ever acknowledged; or
 *   <li>released: its writer, a live node, no longer holds the tablet open (it reported closing
 *       it without a flush, or answered that it does not hold it), so it serves the tablet no
 *       more and acknowledged every write of it before it closed it. (A clean close takes the
 *       folder out of the placement.)
 * </ul>
 * A named folder whose writer is no live member (downed, removed, an earlier life) is fenced at
 * once, whatever the reason its writer left: the source of a move frozen in its hand-over, a
 * drained node, the master's own node. One whose writer is Up but unreachable (frozen, cut off)
 * is fenced too, but only while the master's side holds a majority, as the fast path of
 * {@link Fences}: a master on the minority side waits for the split-brain resolver. One whose
 * writer is live and reachable is asked whether it still holds the tablet ({@link
 * MasterNodes#holds}; its close report may be on its way, or lost, or the tablet is a split's
 * child it never opened), and is fenced only if it has not let go within {@code closeReportWait}.
 *
 * <p>Owned by the master's thread, except the sets of folders fenced and under way and of
 * releases, which the fences' completions and the nodes' answers change from other threads.
 * What is released is kept in memory only: a master that takes over asks again.
 */
final class OpenChecks {
  private static final Logger LOG = LoggerFactory.getLogger(OpenChecks.class);

  private final MasterNodes nodes;
  private final Duration closeReportWait;
  private final LongSupplier nanoTime;
  /** Folders (names under logs/) fenced by this master: durable once in here. */
  private final Set<String> fenced = ConcurrentHashMap.newKeySet();
  /** Folders whose fence is under way. */
  private final Set<String> fencing = ConcurrentHashMap.newKeySet();
  /** Tablet id and folder ({@link #key}) of each release by a live writer. */
  private final Set<String> released = ConcurrentHashMap.newKeySet();
  /** Tablet id and folder of each question to a live writer under way. */
  private final Set<String> asking = ConcurrentHashMap.newKeySet();
  /** When an open first waited for a live writer's folder (nanoTime), by tablet id and folder. */
  private final Map<String, Long> waitingSince = new HashMap<>();

  OpenChecks(MasterNodes nodes, Duration closeReportWait, LongSupplier nanoTime) {
    this.nodes = nodes;
    this.closeReportWait = closeReportWait;
    this.nanoTime = nanoTime;
  }

  /**
   * The folders of {@code logs} (a placement's) that keep tablet {@code tabletId} from opening
   * at the writer of {@code openerLog} now: empty when it may open. Starts the fences and
   * questions they need; the opener asks again.
   */
  List<String> blocking(String tabletId, List<String> logs, String openerLog) {
    List<String> out = new ArrayList<>();
    List<ClusterNodes.NodeInfo> all = nodes.all();
    Map<String, ClusterNodes.NodeInfo> writers = members(all);
    boolean majority = majority(all);
    long now = nanoTime.getAsLong();
    for (String folder : logs) {
      String key = key(tabletId, folder);
      if (folder.equals(openerLog) || fenced.contains(folder) || released.contains(key)) {
        continue;
      }
      out.add(folder);
      ClusterNodes.NodeInfo writer = writers.get(folder);
      if (writer == null) {
        fence(folder); // no live member writes it
      } else if (!writer.reachable()) {
        if (majority) {
          fence(folder);
        }
      } else {
        long since = waitingSince.computeIfAbsent(key, k -> now);
        if (now - since < closeReportWait.toNanos()) {
          ask(writer, tabletId, folder);
        } else {
          if (!fencing.contains(folder)) {
            LOG.warn("node {} has not let go of tablet {} within {}: fencing its commit log {} before the tablet "
                + "opens elsewhere", writer.name(), tabletId, closeReportWait, folder);
          }
          fence(folder);
        }
      }
    }
    return out;
  }

  /** The writer of {@code folder} reported that it closed tablet {@code tabletId} without flushing it. */
  void released(String tabletId, String folder) {
    released.add(key(tabletId, folder));
  }

  /**
   * Tablet {@code tabletId} opens (again) at the writer of {@code folder}: a release that writer
   * made before no longer holds.
   */
  void opened(String tabletId, String folder) {
    released.remove(key(tabletId, folder));
    waitingSince.remove(key(tabletId, folder));
  }

  /** Forgets what no placement of {@code d} names any more. */
  void retain(Directory d) {
    // Each record is checked by itself: the records are few, the placements may be a million.
    fenced.removeIf(f -> !d.namesLog(f));
    released.removeIf(k -> !namedBy(d, k));
    waitingSince.keySet().removeIf(k -> !namedBy(d, k));
  }

  /** Members that may still write their folder, by folder: not down or removed. */
  private static Map<String, ClusterNodes.NodeInfo> members(List<ClusterNodes.NodeInfo> all) {
    Map<String, ClusterNodes.NodeInfo> out = new HashMap<>();
    for (ClusterNodes.NodeInfo n : all) {
      if (!n.log().isEmpty() && n.status() != MemberStatus.down() && n.status() != MemberStatus.removed()) {
        out.put(n.log(), n);
      }
    }
    return out;
  }

  /** Whether the reachable members are a strict majority of the members not down or removed. */
  private static boolean majority(List<ClusterNodes.NodeInfo> all) {
    List<ClusterNodes.NodeInfo> counted = all.stream()
        .filter(n -> n.status() != MemberStatus.down() && n.status() != MemberStatus.removed()).toList();
    return counted.stream().filter(ClusterNodes.NodeInfo::reachable).count() * 2 > counted.size();
  }

  /** Asks {@code writer} whether it still holds the tablet; one question at a time per tablet and folder. */
  private void ask(ClusterNodes.NodeInfo writer, String tabletId, String folder) {
    String key = key(tabletId, folder);
    if (!asking.add(key)) {
      return;
    }
    nodes.holds(writer, tabletId).whenComplete((open, err) -> {
      if (err == null && !open) {
        released.add(key);
      }
      asking.remove(key);
    });
  }

  private void fence(String folder) {
    if (!fencing.add(folder)) {
      return;
    }
    nodes.fenceLogs(List.of(folder)).whenComplete((ok, err) -> {
      if (err == null) {
        fenced.add(folder);
      } else {
        LOG.warn("fencing commit log {} failed; the next attempt to open a tablet that names it tries again: {}",
            folder, err.toString());
      }
      fencing.remove(folder);
    });
  }

  private static String key(String tabletId, String folder) {
    return tabletId + " " + folder;
  }

  /** Whether the placement of the tablet of {@code key} (as {@link #key} made it) names its folder. */
  private static boolean namedBy(Directory d, String key) {
    int space = key.indexOf(' ');
    return d.placementOf(key.substring(0, space)).logs().contains(key.substring(space + 1));
  }
}
