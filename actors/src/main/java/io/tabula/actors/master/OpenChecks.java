package io.tabula.actors.master;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
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
 *   <li>released: its writer, a live node, reported that it closed the tablet (without a flush:
 *       a clean close takes the folder out of the placement), so it serves the tablet no more
 *       and acknowledged every write of it before the report.
 * </ul>
 * A named folder whose writer is not a live, reachable member (downed, removed, frozen, cut
 * off, or an earlier life) is fenced at once, whatever the reason its writer left: the source
 * of a move frozen in its hand-over, a drained node, the master's own node. A folder whose
 * writer is live and reachable is waited for, {@code closeReportWait} at most (its close report
 * may be on its way: a hand-over), then fenced too.
 *
 * <p>Owned by the master's thread, except {@link #fenced} and {@link #fencing}, which the
 * fences' completions change from an I/O thread. What is released is kept in memory only: a
 * master that takes over waits for such a folder, then fences it.
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
  /** Tablet id and folder ({@link #key}) of each release reported by a live writer. */
  private final Set<String> released = new HashSet<>();
  /** When an open first waited for a live writer's folder (nanoTime), by tablet id and folder. */
  private final Map<String, Long> waitingSince = new HashMap<>();

  OpenChecks(MasterNodes nodes, Duration closeReportWait, LongSupplier nanoTime) {
    this.nodes = nodes;
    this.closeReportWait = closeReportWait;
    this.nanoTime = nanoTime;
  }

  /**
   * The folders of {@code logs} (a placement's) that keep tablet {@code tabletId} from opening
   * at the writer of {@code openerLog} now: empty when it may open. Starts the fences they need;
   * the opener asks again.
   */
  List<String> blocking(String tabletId, List<String> logs, String openerLog) {
    List<String> out = new ArrayList<>();
    Map<String, ClusterNodes.NodeInfo> writers = liveWriters();
    long now = nanoTime.getAsLong();
    for (String folder : logs) {
      if (folder.equals(openerLog) || fenced.contains(folder) || released.contains(key(tabletId, folder))) {
        continue;
      }
      out.add(folder);
      ClusterNodes.NodeInfo writer = writers.get(folder);
      if (writer != null) {
        long since = waitingSince.computeIfAbsent(key(tabletId, folder), k -> now);
        if (now - since < closeReportWait.toNanos()) {
          continue;
        }
        if (!fencing.contains(folder)) {
          LOG.warn("node {} has not reported closing tablet {} within {}: fencing its commit log {} before the "
              + "tablet opens elsewhere", writer.name(), tabletId, closeReportWait, folder);
        }
      }
      fence(folder);
    }
    return out;
  }

  /** The writer of {@code folder} reported that it closed tablet {@code tabletId} without flushing it. */
  void released(String tabletId, String folder) {
    released.add(key(tabletId, folder));
    waitingSince.remove(key(tabletId, folder));
  }

  /** Forgets what no placement of {@code d} names any more. */
  void retain(Directory d) {
    Set<String> named = new HashSet<>();
    Set<String> keys = new HashSet<>();
    d.placement().forEach((id, p) -> p.logs().forEach(f -> {
      named.add(f);
      keys.add(key(id, f));
    }));
    fenced.retainAll(named);
    released.retainAll(keys);
    waitingSince.keySet().retainAll(keys);
  }

  /** Members that may still write their folder, by folder: not down or removed, and reachable. */
  private Map<String, ClusterNodes.NodeInfo> liveWriters() {
    Map<String, ClusterNodes.NodeInfo> out = new HashMap<>();
    for (ClusterNodes.NodeInfo n : nodes.all()) {
      if (!n.log().isEmpty() && n.reachable() && n.status() != MemberStatus.down()
          && n.status() != MemberStatus.removed()) {
        out.put(n.log(), n);
      }
    }
    return out;
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
}
