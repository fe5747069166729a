package io.tabula.actors.master;

import io.tabula.actors.tablet.TabletActor;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.pattern.StatusReply;
import org.slf4j.Logger;

/**
 * The master's placement of tablets on nodes (paper §5.2): which node a new or orphaned
 * tablet goes to, whether a move may start, the first step of a move, and the periodic look
 * for tablets to place and moves that took too long. Decisions only: the {@link Master}
 * records each as events.
 *
 * <p>Owned by the master's thread: every method is called from its command handling.
 */
final class Placements {
  private final Master.Nodes nodes;
  private final Master.Tablets tablets;
  private final MasterSettings settings;
  /** When each move this master knows of started (System.nanoTime), by tablet id. */
  private final Map<String, Long> moveStarted = new HashMap<>();
  /** When each node was last seen in the cluster (System.nanoTime). */
  private final Map<String, Long> lastSeen = new HashMap<>();
  private final long bornNanos = System.nanoTime();

  Placements(Master.Nodes nodes, Master.Tablets tablets, MasterSettings settings) {
    this.nodes = nodes;
    this.tablets = tablets;
    this.settings = settings;
  }

  /** Whether {@code node} is an Up member now. */
  boolean isUp(String node) {
    return !node.isEmpty() && upNodes().contains(node);
  }

  private List<String> upNodes() {
    return nodes.all().stream().filter(ClusterNodes.NodeInfo::up).map(ClusterNodes.NodeInfo::name).toList();
  }

  /** The Up node owning the fewest tablets (ties: by name), or null when none is Up. */
  String leastLoaded(Directory d) {
    Map<String, Integer> load = d.tabletsPerNode();
    return upNodes().stream().min(Comparator.<String>comparingInt(n -> load.getOrDefault(n, 0))
        .thenComparing(Comparator.naturalOrder())).orElse(null);
  }

  /**
   * Owners for {@code ids} (new tablets, in row order), dealt round the Up nodes starting
   * with the least loaded, so a table's neighbouring tablets land on different nodes.
   * Empty when no node is Up.
   */
  Map<String, String> spread(Directory d, List<String> ids) {
    Map<String, Integer> load = new HashMap<>(d.tabletsPerNode());
    Map<String, String> out = new LinkedHashMap<>();
    List<String> up = upNodes();
    if (up.isEmpty()) {
      return out;
    }
    for (String id : ids) {
      String n = up.stream().min(Comparator.<String>comparingInt(x -> load.getOrDefault(x, 0))
          .thenComparing(Comparator.naturalOrder())).orElseThrow();
      out.put(id, n);
      load.merge(n, 1, Integer::sum);
    }
    return out;
  }

  /** Why tablet {@code id} may not move to {@code to} now, or null if it may. */
  Refusal refuseMove(Directory d, String id, String to) {
    if (d.tablet(id) == null) {
      return Refusal.of(ErrorCode.NOT_FOUND, "tablet " + id + " is not known");
    }
    if (!isUp(to)) {
      return Refusal.of(ErrorCode.FAILED_PRECONDITION, "node " + to + " is not an Up node of the cluster");
    }
    TabletPlacement p = d.placementOf(id);
    if (p.state() != TabletPlacement.State.SERVING) {
      return Refusal.of(ErrorCode.FAILED_PRECONDITION, "tablet " + id + " is already moving ("
          + p.state().name().toLowerCase() + ")");
    }
    if (tablets == null) {
      return Refusal.of(ErrorCode.FAILED_PRECONDITION, "this master does not move tablets");
    }
    if (!p.owner().equals(to) && movesUnderWay(d) >= settings.maxMoves()) {
      return Refusal.of(ErrorCode.UNAVAILABLE, settings.maxMoves() + " moves are under way already; try again");
    }
    return null;
  }

  /** How many tablets are moving now. */
  static int movesUnderWay(Directory d) {
    return (int) d.placement().values().stream().filter(p -> p.state() != TabletPlacement.State.SERVING).count();
  }

  /**
   * The first step of a move (paper §5.2): asks the tablet to compact its memtable while it
   * still serves, so the hand-over that follows has little left to write. The answer comes
   * back as a {@link Master.MovePrepared}.
   */
  void prepare(ActorContext<Master.Command> ctx, String id, String from, String to) {
    moveStarted.put(id, System.nanoTime());
    ctx.getLog().info("moving tablet {} from {} to {}", id, from, to);
    ctx.pipeToSelf(AskPattern.<TabletActor.Command, StatusReply<Done>>ask(tablets.tablet(id),
        TabletActor.PrepareMove::new, settings.moveTimeout().dividedBy(2), ctx.getSystem().scheduler()),
        (ok, err) -> new Master.MovePrepared(id, to, err == null && ok.isSuccess()));
  }

  /** A move ended (served at its destination, or given up): logs how long it took. */
  void moveEnded(String id, Logger log, String how) {
    Long started = moveStarted.remove(id);
    log.info("move of tablet {} {}{}", id, how, started == null ? ""
        : " after " + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms");
  }

  /**
   * What the periodic look finds to record: moves given up (one a previous master started
   * and left preparing, which only it could finish, or one that took longer than the move
   * timeout) and tablets to place (unassigned, or owned by a node gone from the cluster for
   * longer than {@code absentFor}) on the least loaded Up nodes.
   */
  List<Master.Event> onTick(Directory d, Logger log) {
    long now = System.nanoTime();
    List<Master.Event> events = new ArrayList<>();
    for (Map.Entry<String, TabletPlacement> e : d.placement().entrySet()) {
      TabletPlacement p = e.getValue();
      if (p.state() == TabletPlacement.State.SERVING) {
        continue;
      }
      Long started = moveStarted.get(e.getKey());
      if (started == null && p.state() == TabletPlacement.State.PREPARING) {
        events.add(new Master.MoveFinished(e.getKey()));
        log.info("giving up the move of tablet {} to {} that an earlier master started", e.getKey(), p.peer());
      } else if (started == null) {
        moveStarted.put(e.getKey(), now);
      } else if (now - started > settings.moveTimeout().toNanos()) {
        events.add(new Master.MoveFinished(e.getKey()));
        moveEnded(e.getKey(), log, "to " + p.owner() + " given up: not finished in " + settings.moveTimeout());
      }
    }
    List<ClusterNodes.NodeInfo> all = nodes.all();
    for (ClusterNodes.NodeInfo n : all) {
      if (n.status() != MemberStatus.down() && n.status() != MemberStatus.removed()) {
        lastSeen.put(n.name(), now);
      }
    }
    List<String> orphans = new ArrayList<>();
    for (TabletInfo t : d.allTablets()) {
      String owner = d.ownerOf(t.id());
      if (owner.isEmpty() || now - lastSeen.getOrDefault(owner, bornNanos) > settings.absentFor().toNanos()) {
        orphans.add(t.id());
      }
    }
    if (!orphans.isEmpty()) {
      Map<String, String> owners = new TreeMap<>(spread(d, orphans));
      if (!owners.isEmpty()) {
        log.info("placing {} tablets that had no live owner: {}", owners.size(), owners);
        events.add(new Master.TabletsAssigned(owners));
      }
    }
    return events;
  }
}
