package io.tabula.actors.master;

import io.tabula.actors.tablet.TabletActor;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongSupplier;
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
  private final MasterNodes nodes;
  private final Master.Tablets tablets;
  private final MasterSettings settings;
  private final Fences fences;
  /** When each move this master knows of started (nanoTime), by tablet id. */
  private final Map<String, Long> moveStarted = new HashMap<>();
  /** When each node was last seen in the cluster (nanoTime). */
  private final Map<String, Long> lastSeen = new HashMap<>();
  private final LongSupplier nanoTime;
  private final long bornNanos;
  /** Nodes whose tablets move away (they leave once none is left), by name. */
  private final Set<String> draining = new HashSet<>();
  /** Nodes asked to leave once drained (so asked once). */
  private final Set<String> toldToLeave = new HashSet<>();
  /**
   * Recent load by tablet id: {reads and writes per second (a moving average), size in bytes,
   * reads per second, writes per second}.
   */
  private final Map<String, double[]> load = new HashMap<>();
  /** When each tablet last finished a move (nanoTime). */
  private final Map<String, Long> lastMoved = new HashMap<>();
  private long lastBalanceNanos;
  /**
   * How often the master looks for tablets to merge (see {@link #onTick}), up to
   * {@link #MERGE_LOOK_TABLETS} tablets; one look reads every tablet, so beyond that the looks
   * are further apart in proportion (100,000 tablets: every 10 s). Merges wait for tablets
   * cold for minutes.
   */
  static final long MERGE_LOOK_EVERY_NANOS = Duration.ofSeconds(2).toNanos();
  static final int MERGE_LOOK_TABLETS = 20_000;
  /** When it last did (nanoTime). */
  private long lastMergeLook = Long.MIN_VALUE / 2;
  /** How often the load and move records of tablets gone from the directory are forgotten. */
  static final long FORGET_EVERY_NANOS = Duration.ofSeconds(5).toNanos();
  /** When they last were (nanoTime). */
  private long lastForget = Long.MIN_VALUE / 2;
  private Set<String> lastTargets = Set.of();

  /** When each tablet last had reads or writes above the cold threshold (or was first reported), by id. */
  private final Map<String, Long> warmAt = new HashMap<>();
  /** The merge under way, if any: when it started, by the left tablet's id. */
  private final Map<String, Long> merging = new HashMap<>();
  private final HotSplits hot;

  /**
   * What a periodic look decided: events to record, then moves and merges whose first step
   * follows the recording.
   */
  record Plan(List<Master.Event> events, List<Master.MoveStarted> moves, List<Master.MergeStarted> merges) {
    boolean isEmpty() {
      return events.isEmpty() && moves.isEmpty() && merges.isEmpty();
    }
  }

  Placements(MasterNodes nodes, Master.Tablets tablets, MasterSettings settings) {
    this(nodes, tablets, settings, System::nanoTime);
  }

  /** Placements that go by the monotonic time {@code nanoTime} gives. */
  Placements(MasterNodes nodes, Master.Tablets tablets, MasterSettings settings, LongSupplier nanoTime) {
    this.nodes = nodes;
    this.tablets = tablets;
    this.settings = settings;
    this.nanoTime = nanoTime;
    this.bornNanos = nanoTime.getAsLong();
    this.lastBalanceNanos = bornNanos;
    this.fences = new Fences(nodes, settings.fenceAfter());
    this.hot = new HotSplits(settings.hotOps(), settings.hotShare(), settings.hotFor().toNanos());
  }

  /** Whether this master's node holds the master lease now ({@link MasterNodes#holdsLease}). */
  boolean holdsLease() {
    return nodes.holdsLease();
  }

  /** Whether {@code node} may keep its tablets: an Up member (reachable or not), not draining, not fenced. */
  boolean isUp(String node) {
    return !node.isEmpty() && !fences.isFenced(node) && nodes.all().stream()
        .anyMatch(n -> n.up() && n.name().equals(node) && !draining.contains(node));
  }

  /**
   * Whether the tablets of {@code owner}, which is not {@linkplain #isUp up}, may be placed
   * elsewhere now: it owns none, or its commit logs are fenced. If they are not, fencing
   * starts (it completes off this thread), and the caller asks again later.
   */
  boolean mayReplace(String owner) {
    if (owner.isEmpty() || fences.isFenced(owner)) {
      return true;
    }
    fences.fenceAbsent(owner);
    return false;
  }

  /** The Up, reachable nodes that are not draining or fenced: where tablets may go. */
  private List<String> upNodes() {
    return nodes.all().stream().filter(n -> n.up() && n.reachable()).map(ClusterNodes.NodeInfo::name)
        .filter(n -> !draining.contains(n) && !fences.isFenced(n)).toList();
  }

  /** The Up node owning the fewest tablets (ties: by name), or null when none is Up. */
  String leastLoaded(Directory d) {
    Map<String, Integer> load = d.tabletsPerNode();
    return upNodes().stream().min(Comparator.<String>comparingInt(n -> load.getOrDefault(n, 0))
        .thenComparing(Comparator.naturalOrder())).orElse(null);
  }

  /**
   * Starts draining {@code node}: its tablets move away (a few at a time, at each tick), and
   * once it owns none it is asked to leave the cluster. Returns false if it is not a member.
   */
  boolean drain(String node) {
    if (nodes.all().stream().noneMatch(n -> n.name().equals(node))) {
      return false;
    }
    draining.add(node);
    return true;
  }

  /** Takes a tablet's report of its load over the last {@code nanos}. */
  void load(Master.ReportLoad r) {
    double seconds = Math.max(1e-3, r.nanos() / 1e9);
    double rate = (r.reads() + r.writes()) / seconds;
    double[] l = load.computeIfAbsent(r.tabletId(), k -> new double[] {rate, 0, r.reads() / seconds,
        r.writes() / seconds});
    l[0] = 0.5 * l[0] + 0.5 * rate;
    l[1] = r.bytes();
    l[2] = 0.5 * l[2] + 0.5 * r.reads() / seconds;
    l[3] = 0.5 * l[3] + 0.5 * r.writes() / seconds;
    if (l[0] >= settings.coldOpsPerSecond()) {
      warmAt.put(r.tabletId(), nanoTime.getAsLong());
    } else {
      warmAt.putIfAbsent(r.tabletId(), nanoTime.getAsLong());
    }
  }

  /** Recent load by tablet id: {ops per second, bytes, reads per second, writes per second}. */
  Map<String, double[]> loads() {
    Map<String, double[]> out = new TreeMap<>();
    load.forEach((k, v) -> out.put(k, v.clone()));
    return out;
  }

  /**
   * Owners for {@code ids} (new tablets, in row order), dealt round the Up nodes starting
   * with the least loaded, so a table's neighbouring tablets land on different nodes.
   * Empty when no node is Up.
   */
  Map<String, String> spread(Directory d, List<String> ids) {
    Map<String, Integer> load = d.tabletsPerNode();
    Map<String, String> out = new LinkedHashMap<>();
    // {tablets owned, node}, least loaded first (ties: by name): O(log n) per tablet placed
    java.util.PriorityQueue<Map.Entry<Integer, String>> byLoad = new java.util.PriorityQueue<>(
        Map.Entry.<Integer, String>comparingByKey().thenComparing(Map.Entry.comparingByValue()));
    upNodes().forEach(n -> byLoad.add(Map.entry(load.getOrDefault(n, 0), n)));
    if (byLoad.isEmpty()) {
      return out;
    }
    for (String id : ids) {
      Map.Entry<Integer, String> least = byLoad.poll();
      out.put(id, least.getValue());
      byLoad.add(Map.entry(least.getKey() + 1, least.getValue()));
    }
    return out;
  }

  /** {@code owners} for a log line: whole if short, else its size and first entries. */
  static String shortly(Map<String, String> owners) {
    if (owners.size() <= 20) {
      return owners.toString();
    }
    StringBuilder b = new StringBuilder("{");
    owners.entrySet().stream().limit(20).forEach(e -> b.append(e.getKey()).append('=').append(e.getValue()).append(", "));
    return b.append("... (").append(owners.size() - 20).append(" more)}").toString();
  }

  /** Why tablet {@code id} may not move to {@code to} now, or null if it may. */
  Refusal refuseMove(Directory d, String id, String to) {
    if (d.tablet(id) == null) {
      return Refusal.of(ErrorCode.NOT_FOUND, "tablet " + id + " is not known");
    }
    if (!upNodes().contains(to)) {
      return Refusal.of(ErrorCode.FAILED_PRECONDITION, "node " + to + " is not an Up node of the cluster, or is "
          + "unreachable");
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
    return d.unsettledTablets().size();
  }

  /**
   * The first step of a move (paper §5.2): asks the tablet to compact its memtable while it
   * still serves, so the hand-over that follows has little left to write. The answer comes
   * back as a {@link Master.MovePrepared}.
   */
  void prepare(ActorContext<Master.Command> ctx, String id, String from, String to) {
    moveStarted.put(id, nanoTime.getAsLong());
    ctx.getLog().info("moving tablet {} from {} to {}", id, from, to);
    ctx.pipeToSelf(AskPattern.<TabletActor.Command, StatusReply<Done>>ask(tablets.tablet(id),
        TabletActor.PrepareMove::new, settings.moveTimeout().dividedBy(2), ctx.getSystem().scheduler()),
        (ok, err) -> new Master.MovePrepared(id, to, err == null && ok.isSuccess()));
  }

  /** A move ended (served at its destination, or given up): logs how long it took. */
  void moveEnded(String id, Logger log, String how) {
    lastMoved.put(id, nanoTime.getAsLong());
    Long started = moveStarted.remove(id);
    log.info("move of tablet {} {}{}", id, how, started == null ? ""
        : " after " + Duration.ofNanos(nanoTime.getAsLong() - started).toMillis() + " ms");
  }

  /**
   * What the periodic look finds to record: moves given up (one a previous master started
   * and left preparing, which only it could finish, or one that took longer than the move
   * timeout) and tablets to place (unassigned, or owned by a node gone from the cluster for
   * longer than {@code absentFor}) on the least loaded Up nodes.
   */
  Plan onTick(Directory d, Logger log) {
    long now = nanoTime.getAsLong();
    List<Master.Event> events = new ArrayList<>();
    if (now - lastForget >= FORGET_EVERY_NANOS) {
      lastForget = now;
      load.keySet().removeIf(id -> d.tablet(id) == null);
      lastMoved.keySet().removeIf(id -> d.tablet(id) == null);
      warmAt.keySet().removeIf(id -> d.tablet(id) == null);
    }
    for (String unsettled : new TreeSet<>(d.unsettledTablets())) {
      Map.Entry<String, TabletPlacement> e = Map.entry(unsettled, d.placementOf(unsettled));
      TabletPlacement p = e.getValue();
      if (p.state() == TabletPlacement.State.SERVING) {
        continue;
      }
      if (p.state() == TabletPlacement.State.MERGING) {
        events.addAll(staleMerge(d, e.getKey(), p, now, log));
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
    Set<String> present = new HashSet<>();
    for (ClusterNodes.NodeInfo n : all) {
      if (n.status() != MemberStatus.down() && n.status() != MemberStatus.removed()) {
        lastSeen.put(n.name(), now);
        present.add(n.name());
      }
    }
    draining.retainAll(present);
    toldToLeave.retainAll(present);
    fences.onTick(all, now);
    // An owner this node saw downed or removed (perhaps before this master started) is dead or
    // was stopped by its own side: fence it and place its tablets now. Sharding would ask only
    // once its watch of that node's region fires, which for a frozen node (its socket still
    // accepts connections) is about 10 s later. An owner never seen here (a whole cluster
    // starting again) is waited for: the slow path (absent-for) decides.
    Set<String> downed = nodes.gone();
    // By owner: a look costs the nodes and the tablets to place, not every tablet there is.
    List<String> orphans = new ArrayList<>();
    for (String owner : new TreeSet<>(d.owners())) {
      boolean gone = owner.isEmpty() || fences.isFenced(owner) || (downed.contains(owner) && !present.contains(owner))
          || now - lastSeen.getOrDefault(owner, bornNanos) > settings.absentFor().toNanos();
      if (gone && mayReplace(owner)) {
        orphans.addAll(new TreeSet<>(d.tabletsOwnedBy(owner)));
      }
    }
    if (!orphans.isEmpty()) {
      Map<String, String> owners = new TreeMap<>(spread(d, orphans));
      if (!owners.isEmpty()) {
        log.info("placing {} tablets that had no live owner: {}", owners.size(), Placements.shortly(owners));
        events.add(new Master.TabletsAssigned(owners));
      }
    }
    if (events.isEmpty()) {
      Map<String, String> closed = drainClosed(d, log);
      if (!closed.isEmpty()) {
        events.add(new Master.TabletsAssigned(closed));
      }
    }
    List<Master.MoveStarted> moves = new ArrayList<>();
    List<Master.MergeStarted> merges = new ArrayList<>();
    if (events.isEmpty()) {
      moves.addAll(drainMoves(d, all, log));
      if (moves.isEmpty()) {
        // A closed tablet the balancer moves is placed by a change of owner alone: a move's
        // steps would open it on its node to compact it, then again on the other.
        Map<String, String> placed = new TreeMap<>();
        for (Master.MoveStarted m : balanceMoves(d, now, log)) {
          if (d.placementOf(m.tabletId()).closed()) {
            placed.put(m.tabletId(), m.to());
            lastMoved.put(m.tabletId(), now);
          } else {
            moves.add(m);
          }
        }
        if (!placed.isEmpty()) {
          log.info("balancing: of these, {} closed tablets are placed by a change of owner, without a move's steps: {}",
              placed.size(), shortly(placed));
          events.add(new Master.TabletsAssigned(placed));
        }
      }
      // Merges wait for tablets cold for minutes: a look every MERGE_LOOK_EVERY is soon enough,
      // and each look reads every tablet.
      if (events.isEmpty() && moves.isEmpty() && movesUnderWay(d) == 0 && merging.isEmpty()
          && now - lastMergeLook >= MERGE_LOOK_EVERY_NANOS * Math.max(1, d.tabletCount() / MERGE_LOOK_TABLETS)) {
        lastMergeLook = now;
        mergeOrColocate(d, now, log, moves, merges);
      }
      splitHot(d, now, log);
    }
    return new Plan(events, moves, merges);
  }

  /** Asks the tablets that have stayed hot to split ({@link HotSplits}). */
  private void splitHot(Directory d, long now, Logger log) {
    if (tablets == null || settings.hotFor().isZero()) {
      return;
    }
    for (String id : hot.due(d, load, upNodes().size(), now)) {
      log.info("tablet {} is hot ({} rows/s): asking it to split", id, Math.round(load.get(id)[0]));
      tablets.tablet(id).tell(TabletActor.SplitHot.INSTANCE);
    }
  }

  /**
   * A merging tablet this master did not start (an earlier master's: only it knew how far it
   * got, and the tablets are intact until the merge is recorded) or that took longer than the
   * move timeout: the merge is given up. Looked at from its left tablet.
   */
  private List<Master.Event> staleMerge(Directory d, String id, TabletPlacement p, long now, Logger log) {
    TabletInfo t = d.tablet(id);
    TabletInfo next = nextOf(d, t);
    if (next == null || !d.placementOf(next.id()).peer().equals(p.peer())) {
      return List.of();
    }
    Long started = merging.get(id);
    if (started != null && now - started <= settings.moveTimeout().toNanos()) {
      return List.of();
    }
    merging.remove(id);
    log.info("giving up the merge of tablets {} and {}: {}", id, next.id(), started == null
        ? "an earlier master started it" : "not finished in " + settings.moveTimeout());
    return List.of(new Master.MergeAbandoned(id, next.id()));
  }

  /** The tablet after {@code t} in its table, or null (a binary search: a table may have 100,000 tablets). */
  private static TabletInfo nextOf(Directory d, TabletInfo t) {
    List<TabletInfo> l = d.tabletsOf(t.table());
    int i = d.indexOf(t.table(), t.startRow());
    return i >= 0 && i + 1 < l.size() && l.get(i).id().equals(t.id()) ? l.get(i + 1) : null;
  }

  /**
   * Finds two adjacent tablets, both serving, cold for {@code mergeColdFor} and together
   * smaller than {@code mergeBelowBytes}: on one node, a merge starts; on two, the right one
   * moves to the left one's node first.
   */
  private void mergeOrColocate(Directory d, long now, Logger log, List<Master.MoveStarted> moves,
      List<Master.MergeStarted> merges) {
    for (String table : d.tables().keySet()) {
      TabletInfo a = null;
      // an iterator, not get(i): a persistent vector's get is O(log n)
      for (TabletInfo b : d.tabletsOf(table)) {
        TabletInfo left = a;
        a = b;
        // the cheap tests (this master's own maps) before the directory's placements
        if (left == null || !coldAndReported(left.id(), now) || !coldAndReported(b.id(), now)
            || load.get(left.id())[1] + load.get(b.id())[1] >= settings.mergeBelowBytes()) {
          continue;
        }
        TabletPlacement pa = d.placementOf(left.id());
        TabletPlacement pb = d.placementOf(b.id());
        if (!mergeable(left.id(), pa, now) || !mergeable(b.id(), pb, now)) {
          continue;
        }
        if (pa.owner().equals(pb.owner())) {
          String child = TabletIds.fresh(table);
          while (d.tablet(child) != null) { // never met in practice (TabletIds); the master has the directory at hand
            child = TabletIds.fresh(table);
          }
          log.info("merging the small, cold tablets {} and {} of table {} into {} on {}", left.id(), b.id(), table,
              child, pa.owner());
          merges.add(new Master.MergeStarted(table, left.id(), b.id(), child));
        } else if (isUp(pa.owner())) {
          log.info("moving tablet {} to {} to merge it with {}", b.id(), pa.owner(), left.id());
          moves.add(new Master.MoveStarted(b.id(), pb.owner(), pa.owner()));
        } else {
          continue;
        }
        return;
      }
    }
  }

  /**
   * Whether tablet {@code id} may be merged now: serving, cold, and open (a log names it). A
   * merge closes both tablets cleanly through their actors; a tablet closed already opens only
   * at its next request (docs/cluster.md, "Tablets open when first asked"), and would refuse to
   * open while it is being merged, so the merge would be given up and tried again at every look.
   */
  private boolean mergeable(String id, TabletPlacement p, long now) {
    return p.state() == TabletPlacement.State.SERVING && p.assigned() && !p.logs().isEmpty()
        && coldAndReported(id, now);
  }

  /** Whether tablet {@code id} has reported its load and been cold for {@code mergeColdFor}. */
  private boolean coldAndReported(String id, long now) {
    Long warm = warmAt.get(id);
    return load.containsKey(id) && warm != null && now - warm >= settings.mergeColdFor().toNanos();
  }

  /** The first step of a merge: the right tablet closes cleanly. The answer comes back as a {@link Master.MergeStep}. */
  void closeRight(ActorContext<Master.Command> ctx, Master.MergeStarted m) {
    merging.put(m.leftId(), nanoTime.getAsLong());
    ctx.pipeToSelf(AskPattern.<TabletActor.Command, StatusReply<Done>>ask(tablets.tablet(m.rightId()),
        TabletActor.CloseForMerge::new, settings.moveTimeout().dividedBy(2), ctx.getSystem().scheduler()),
        (ok, err) -> new Master.MergeStep(m.table(), m.leftId(), m.rightId(), m.childId(), 1,
            err == null && ok.isSuccess()));
  }

  /** The second step: the left tablet closes cleanly and writes the merged tablet's manifest. */
  void mergeLeft(ActorContext<Master.Command> ctx, Master.MergeStarted m) {
    ctx.pipeToSelf(AskPattern.<TabletActor.Command, StatusReply<Done>>ask(tablets.tablet(m.leftId()),
        r -> new TabletActor.MergeInto(m.rightId(), m.childId(), r), settings.moveTimeout().dividedBy(2),
        ctx.getSystem().scheduler()), (ok, err) -> new Master.MergeStep(m.table(), m.leftId(), m.rightId(),
        m.childId(), 2, err == null && ok.isSuccess()));
  }

  /** A merge ended (done or given up): logs how long it took. */
  void mergeEnded(String leftId, Logger log, String how) {
    Long started = merging.remove(leftId);
    log.info("merge {}{}", how, started == null ? ""
        : " after " + Duration.ofNanos(nanoTime.getAsLong() - started).toMillis() + " ms");
  }

  /**
   * The closed tablets of draining nodes, placed elsewhere at once: serving, and no log names
   * them (never opened, or closed cleanly: everything they hold is in their files), so there is
   * nothing to compact or replay, and a move's steps would open each on its source and then on
   * its destination. A tablet opening on its draining owner meanwhile has its open report
   * refused (it is placed elsewhere) before it takes a write, and its requests go where it is
   * placed. A drain of a node with 33,000 tablets never opened is then one event, not 33,000
   * moves a few at a time.
   */
  private Map<String, String> drainClosed(Directory d, Logger log) {
    Map<String, String> out = new TreeMap<>();
    for (String node : new TreeSet<>(draining)) {
      List<String> closed = new ArrayList<>();
      for (String id : new TreeSet<>(d.tabletsOwnedBy(node))) {
        TabletPlacement p = d.placementOf(id);
        if (p.closed()) {
          closed.add(id);
        }
      }
      if (!closed.isEmpty()) {
        Map<String, String> placed = spread(d, closed);
        if (!placed.isEmpty()) {
          log.info("draining {}: {} closed tablets placed elsewhere at once: {}", node, placed.size(), shortly(placed));
          out.putAll(placed);
        }
      }
    }
    return out;
  }

  /** Moves off draining nodes, within the moves allowed at once; a drained node is asked to leave. */
  private List<Master.MoveStarted> drainMoves(Directory d, List<ClusterNodes.NodeInfo> all, Logger log) {
    List<Master.MoveStarted> out = new ArrayList<>();
    int room = settings.maxMoves() - movesUnderWay(d);
    Map<String, Integer> owned = d.tabletsPerNode();
    for (String node : List.copyOf(draining)) {
      if (owned.getOrDefault(node, 0) == 0) {
        if (toldToLeave.add(node)) {
          all.stream().filter(n -> n.name().equals(node)).findFirst().ifPresent(n -> {
            log.info("node {} is drained: asking it to leave the cluster", node);
            nodes.leave(n);
          });
        }
        continue;
      }
      // Each node's tablets, counting those on their way to it, so a drain spreads them.
      Map<String, Integer> count = new HashMap<>(owned);
      d.unsettledTablets().forEach(id -> {
        TabletPlacement p = d.placementOf(id);
        if (p.state() == TabletPlacement.State.PREPARING) {
          count.merge(p.peer(), 1, Integer::sum);
        }
      });
      List<String> targets = upNodes();
      for (String id : new TreeSet<>(d.tabletsOwnedBy(node))) {
        if (room <= 0 || targets.isEmpty()) {
          return out;
        }
        TabletPlacement p = d.placementOf(id);
        if (p.state() == TabletPlacement.State.SERVING) {
          String to = targets.stream().min(Comparator.<String>comparingInt(n -> count.getOrDefault(n, 0))
              .thenComparing(Comparator.naturalOrder())).orElseThrow();
          out.add(new Master.MoveStarted(id, node, to));
          count.merge(to, 1, Integer::sum);
          room--;
        }
      }
    }
    return out;
  }

  /** Balancing moves, every {@code balanceEvery} or at once when the nodes changed. */
  private List<Master.MoveStarted> balanceMoves(Directory d, long now, Logger log) {
    List<String> targets = upNodes();
    Set<String> nowTargets = Set.copyOf(targets);
    boolean changed = !nowTargets.equals(lastTargets);
    if (!changed && now - lastBalanceNanos < settings.balanceEvery().toNanos()) {
      return List.of();
    }
    lastTargets = nowTargets;
    lastBalanceNanos = now;
    Set<String> frozen = new HashSet<>();
    frozen.addAll(d.unsettledTablets());
    lastMoved.forEach((id, at) -> {
      if (now - at < settings.movedStays().toNanos()) {
        frozen.add(id);
      }
    });
    Map<String, Double> ops = new HashMap<>();
    load.forEach((id, l) -> ops.put(id, l[0]));
    List<Master.MoveStarted> out = new ArrayList<>();
    for (Balancer.Move m : Balancer.plan(d, targets, ops, frozen, settings.maxMoves() - movesUnderWay(d))) {
      out.add(new Master.MoveStarted(m.tabletId(), m.from(), m.to()));
    }
    if (!out.isEmpty()) {
      log.info("balancing: moving {}", out.stream().map(m -> m.tabletId() + " " + m.from() + "->" + m.to()).toList());
    }
    return out;
  }
}
