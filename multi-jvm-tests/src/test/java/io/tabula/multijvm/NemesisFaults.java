package io.tabula.multijvm;

import io.tabula.multijvm.NemesisCluster.Life;
import io.tabula.multijvm.NemesisCluster.Unavailable;
import io.tabula.multijvm.NemesisSchedule.Step;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Runs one step of the nemesis schedule on the cluster and the load: prints the step as drawn
 * (its target resolved: which node is the master's now), brings the fault about, ends it, starts
 * again under the same name whatever died, and waits until the cluster is healthy again (four
 * nodes, every tablet serving). Only the step's node is faulty meanwhile.
 *
 * <p>Bounds: a node that neither rejoins nor stops within {@link #REJOIN_OR_STOP} once its
 * fault ended, an earlier life still running {@link #EXIT_AFTER_RESUME} after SIGCONT, a node
 * whose disk refuses fsync still running {@link #EXIT_AFTER_FSYNC_REFUSED} later, or a drained
 * node still running {@link #EXIT_AFTER_DRAIN} after the drain was accepted, is reported as a
 * violation (it is killed, and the schedule goes on); the cluster's own waits are bounded as
 * {@link NemesisCluster} says. Moves, splits and merges that do not happen within their waits
 * are noted, not violations: the master may refuse or delay them.
 */
final class NemesisFaults {
  static final Duration REJOIN_OR_STOP = Duration.ofSeconds(90);
  static final Duration EXIT_AFTER_RESUME = Duration.ofSeconds(60);
  static final Duration EXIT_AFTER_FSYNC_REFUSED = Duration.ofSeconds(90);
  static final Duration EXIT_AFTER_DRAIN = Duration.ofSeconds(120);
  private static final Duration CHANGE = Duration.ofSeconds(30);
  /** How long the cluster must stay healthy after a step before the next one (a late fence, or a late down). */
  static final Duration STABLE = Duration.ofSeconds(3);

  /** How long Management HTTP (tablet lists, moves, drains) may take to answer on a healthy node. */
  static final Duration MANAGEMENT = Duration.ofSeconds(30);

  private final NemesisCluster cluster;
  private final NemesisLoad load;
  private final NemesisReport report;

  NemesisFaults(NemesisCluster cluster, NemesisLoad load, NemesisReport report) {
    this.cluster = cluster;
    this.load = load;
    this.report = report;
  }

  /** Runs {@code s} until the cluster is healthy again; returns its window. */
  NemesisReport.StepWindow run(Step s) throws IOException, InterruptedException, Unavailable {
    long start = System.nanoTime();
    String master = cluster.master();
    String target = s.target().equals(NemesisSchedule.MASTER) ? master : s.target();
    String who = target + (target.equals(master) ? " (the master's node)" : "");
    String first = s.moveFirst() ? ", right after asking to move one of its tablets away" : "";
    String line = switch (s.kind()) {
      case KILL -> "kill -9 of " + who + first + "; started again " + s.seconds() + " s later";
      case STOP -> "SIGSTOP of " + who + first + "; SIGCONT " + s.seconds() + " s later";
      case RESTART_WHILE_STOPPED -> "SIGSTOP of " + who + first + "; once it is no member, a new " + target
          + " started (same name, same root, other ports); SIGCONT of the stopped one " + s.seconds() + " s later";
      case PARTITION -> who + " cut off from the other nodes" + first + "; healed " + s.seconds() + " s later";
      case FSYNC -> "kill -9 of " + who + ", started again on a disk that then refuses every fsync";
      case DRAIN -> "drain of " + who;
      case MOVE -> "move of a tablet (choice " + s.pick() + ")";
      case SPLIT -> "a burst of 1 KiB rows into range k" + (s.pick() % NemesisLoad.RANGES) + ", to split it by size";
      case HOT_SPLIT -> "rows z-" + hotFrom(s) + ".. read hot, to split the z range by load";
      case MERGE -> "the z range left cool, to merge its pieces";
    };
    report.step(String.format("step %d: %s; then a pause of %d s", s.number(), line, s.pauseAfter()));
    if (s.kind().nodeFault && s.moveFirst()) {
      moveAwayFrom(target, s.pick());
    }
    switch (s.kind()) {
      case KILL -> {
        cluster.kill(target);
        Thread.sleep(s.seconds() * 1_000L);
        cluster.start(target, false);
      }
      case STOP -> {
        Life l = cluster.stop(target);
        Thread.sleep(s.seconds() * 1_000L);
        cluster.resume(l);
        rejoinOrRestart(l);
      }
      case RESTART_WHILE_STOPPED -> restartWhileStopped(target, s);
      case PARTITION -> {
        Life l = cluster.life(target).orElseThrow();
        cluster.partition(target, true);
        Thread.sleep(s.seconds() * 1_000L);
        cluster.partition(target, false);
        rejoinOrRestart(l);
      }
      case FSYNC -> fsyncRefused(target, s);
      case DRAIN -> drain(target);
      case MOVE -> move(s.pick());
      case SPLIT -> split(s);
      case HOT_SPLIT -> {
        int before = zTablets();
        load.heat(hotFrom(s));
        awaitTablets(n -> n > before, "the z range split by load (" + before + " tablets before)");
      }
      case MERGE -> {
        int before = zTablets();
        load.cool();
        awaitTablets(n -> n < before, "the z range's pieces merged (" + before + " tablets before)");
      }
    }
    settle();
    long end = System.nanoTime();
    report.event(String.format("healthy again, %d ms after the step began", NemesisReport.ms(end - start)));
    Thread.sleep(s.pauseAfter() * 1_000L);
    return new NemesisReport.StepWindow(s.number(), s.kind(), line, s.kind().nodeFault ? target : "", start, end);
  }

  /**
   * Waits until the cluster is healthy again, within {@link NemesisCluster#SETTLE}, starting
   * again under its name any life that stopped by itself meanwhile: a node counted healthy
   * again just after its fault ended may still find its log fenced, or itself downed, a moment
   * later, and stop, as it must.
   */
  private void settle() throws IOException, InterruptedException, Unavailable {
    long deadline = System.nanoTime() + NemesisCluster.SETTLE.toNanos();
    while (true) {
      for (String name : NemesisCluster.NAMES) {
        Optional<Life> l = cluster.life(name);
        if (l.isPresent() && !l.get().jvm().alive()) {
          report.event(l.get().label() + " stopped by itself after its fault (fenced or downed); starting " + name
              + " again");
          cluster.ended(name);
          cluster.start(name, false);
        }
      }
      try {
        cluster.awaitHealthy(Duration.ofSeconds(5));
        // Healthy twice, STABLE apart: a node that resumed moments ago may still be fenced by a
        // decision taken while it was away (the master's fast path), and the next fault must not
        // find two nodes faulty.
        Thread.sleep(STABLE.toMillis());
        if (NemesisCluster.NAMES.stream().allMatch(n -> cluster.life(n).map(l -> l.jvm().alive()).orElse(false))) {
          cluster.awaitHealthy(Duration.ZERO);
          return;
        }
      } catch (Unavailable notYet) {
        if (System.nanoTime() > deadline) {
          throw new Unavailable("the cluster was not healthy again within " + NemesisCluster.SETTLE.toSeconds()
              + " s: " + notYet.getMessage());
        }
      }
    }
  }

  private static int hotFrom(Step s) {
    return s.pick() % (NemesisLoad.Z_ROWS - 40);
  }

  /**
   * After a stopped or cut-off life's fault ended: waits until it is a healthy member again, or
   * has stopped by itself (downed or fenced), then starts it again; a life that does neither
   * within {@link #REJOIN_OR_STOP} is reported, killed and started again.
   */
  private void rejoinOrRestart(Life l) throws IOException, InterruptedException, Unavailable {
    long ended = System.nanoTime();
    long deadline = ended + REJOIN_OR_STOP.toNanos();
    while (l.jvm().alive()) {
      try {
        cluster.awaitHealthy(Duration.ZERO);
        report.event(l.label() + " is a healthy member again");
        return;
      } catch (Unavailable notYet) {
        if (System.nanoTime() > deadline) {
          report.violation(l.label() + " neither rejoined the cluster nor stopped within " + REJOIN_OR_STOP.toSeconds()
              + " s after its fault ended (" + notYet.getMessage() + "); killed", ended, System.nanoTime(), "");
          l.jvm().kill();
          break;
        }
        Thread.sleep(500);
      }
    }
    report.event(l.label() + " had stopped by itself " + NemesisReport.ms(System.nanoTime() - ended)
        + " ms after its fault ended; starting " + l.name() + " again");
    cluster.ended(l.name());
    cluster.start(l.name(), false);
  }

  /** SIGSTOP, a new life under the same name once the old one is no member, then SIGCONT of the old one. */
  private void restartWhileStopped(String target, Step s) throws IOException, InterruptedException, Unavailable {
    Life old = cluster.stop(target);
    try {
      Life fresh = cluster.start(target, false);
      report.event(fresh.label() + " serves while " + old.label() + " is stopped; SIGCONT of " + old.label() + " in "
          + s.seconds() + " s");
      Thread.sleep(s.seconds() * 1_000L);
    } finally {
      cluster.resume(old);
    }
    long resumed = System.nanoTime();
    if (old.jvm().awaitExit(EXIT_AFTER_RESUME)) {
      report.event(old.label() + " had stopped " + NemesisReport.ms(System.nanoTime() - resumed)
          + " ms after SIGCONT");
    } else {
      report.violation("the earlier life " + old.label() + " still ran " + EXIT_AFTER_RESUME.toSeconds()
          + " s after SIGCONT, beside " + target + "'s new life; killed", resumed, System.nanoTime(), "");
      old.jvm().kill();
    }
  }

  /**
   * kill -9, a new life on {@link FsyncRefusingStorage} given a tablet, fsync refused; the node
   * must stop by itself; then a plain life again.
   */
  private void fsyncRefused(String target, Step s) throws IOException, InterruptedException, Unavailable {
    cluster.kill(target);
    Life l = cluster.start(target, true);
    cluster.awaitHealthy(NemesisCluster.SETTLE);
    // Always a tablet moved to it now: one the directory still places on the node from its earlier
    // life is opened only at its first request, which may not come before the wait below ends (a
    // run waited 90 s for a node that had opened nothing, so had nothing to fsync).
    moveTo(target, s.pick());
    long on = System.nanoTime();
    cluster.refuseFsync(true);
    try {
      report.event("fsync refused from now on on " + l.label() + "'s disk");
      if (l.jvm().awaitExit(EXIT_AFTER_FSYNC_REFUSED)) {
        report.event(l.label() + " stopped by itself " + NemesisReport.ms(System.nanoTime() - on)
            + " ms after its disk began refusing fsync");
      } else {
        report.violation(l.label() + " still ran " + EXIT_AFTER_FSYNC_REFUSED.toSeconds() + " s after its disk "
            + "began refusing fsync; killed", on, System.nanoTime(), "");
        l.jvm().kill();
      }
    } finally {
      cluster.refuseFsync(false);
    }
    cluster.ended(target);
    cluster.start(target, false);
  }

  /** Drains {@code target} through another node; once it has stopped, starts it again. */
  private void drain(String target) throws IOException, InterruptedException, Unavailable {
    Life l = cluster.life(target).orElseThrow();
    HttpResponse<String> answer = askAgainWhileBusy(() -> cluster.other(target).jvm()
        .post("/tabula/nodes/" + target + "/drain"));
    if (answer.statusCode() != 202) {
      report.event("drain of " + target + " refused: " + answer.statusCode() + " " + answer.body());
      return;
    }
    long accepted = System.nanoTime();
    if (l.jvm().awaitExit(EXIT_AFTER_DRAIN)) {
      report.event(l.label() + " drained and stopped " + NemesisReport.ms(System.nanoTime() - accepted) + " ms later");
    } else {
      report.violation(l.label() + " still ran " + EXIT_AFTER_DRAIN.toSeconds() + " s after its drain was accepted; "
          + "killed", accepted, System.nanoTime(), "");
      l.jvm().kill();
    }
    cluster.ended(target);
    cluster.start(target, false);
  }

  /** Moves tablet number {@code pick} (mod the count, in row order) to another node, and waits until it serves there. */
  private void move(int pick) throws IOException, InterruptedException, Unavailable {
    List<String[]> tablets = tablets("");
    String[] t = tablets.get(pick % tablets.size());
    List<String> others = new ArrayList<>(NemesisCluster.NAMES);
    others.remove(t[3]);
    askMove(t[0], others.get((pick / tablets.size()) % others.size()));
  }

  /** Asks to move one of {@code node}'s tablets (choice {@code pick}) to another node; does not wait for it. */
  private void moveAwayFrom(String node, int pick) throws IOException, InterruptedException, Unavailable {
    List<String[]> mine = tablets(node).stream().filter(t -> t[3].equals(node)).toList();
    if (mine.isEmpty()) {
      report.event(node + " owns no tablet to move away");
      return;
    }
    String[] t = mine.get(pick % mine.size());
    List<String> others = new ArrayList<>(NemesisCluster.NAMES);
    others.remove(node);
    String to = others.get(pick % others.size());
    try {
      HttpResponse<String> answer = cluster.other(node).jvm().post("/tabula/tablets/" + t[0] + "/move?to=" + to);
      report.event("asked to move " + t[0] + " from " + node + " to " + to + ": " + answer.statusCode());
    } catch (IOException e) {
      report.event("asking to move " + t[0] + " from " + node + " to " + to + " failed: " + e);
    }
  }

  /** Moves a tablet (choice {@code pick}) to {@code node}, and waits until it serves there. */
  private void moveTo(String node, int pick) throws IOException, InterruptedException, Unavailable {
    List<String[]> tablets = tablets(node).stream().filter(t -> !t[3].equals(node)).toList();
    if (tablets.isEmpty()) {
      report.event("no tablet of another node to move to " + node);
      return;
    }
    askMove(tablets.get(pick % tablets.size())[0], node);
  }

  private void askMove(String id, String to) throws IOException, InterruptedException, Unavailable {
    HttpResponse<String> answer = askAgainWhileBusy(() -> cluster.healthy().get(0).jvm()
        .post("/tabula/tablets/" + id + "/move?to=" + to));
    if (answer.statusCode() != 202) {
      report.event("move of " + id + " to " + to + " refused: " + answer.statusCode() + " " + answer.body());
      return;
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      String[] o = tablets("").stream().filter(t -> t[0].equals(id)).findFirst().orElse(null);
      if (o == null) {
        report.event(id + " is gone (split or merged) before its move to " + to + " finished");
        return;
      }
      if (o[3].equals(to) && o[4].equals("serving")) {
        report.event(id + " serves on " + to);
        return;
      }
      Thread.sleep(200);
    }
    report.event(id + " did not serve on " + to + " within 60 s of the accepted move");
  }

  @FunctionalInterface
  private interface Ask {
    HttpResponse<String> send() throws IOException, InterruptedException, Unavailable;
  }

  /**
   * Sends {@code ask}, and again while the master answers busy (409, 503) or the node does not
   * answer, up to {@link #MANAGEMENT}; a node that never answers is an unavailability.
   */
  private static HttpResponse<String> askAgainWhileBusy(Ask ask) throws InterruptedException, Unavailable {
    long deadline = System.nanoTime() + MANAGEMENT.toNanos();
    while (true) {
      HttpResponse<String> answer;
      try {
        answer = ask.send();
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw new Unavailable("Management HTTP did not answer within " + MANAGEMENT.toSeconds() + " s: " + e);
        }
        Thread.sleep(500);
        continue;
      }
      boolean busy = answer.statusCode() == 409 || answer.statusCode() == 503;
      if (!busy || System.nanoTime() > deadline) {
        return answer;
      }
      Thread.sleep(500);
    }
  }

  /**
   * Table t's tablets ({@link NemesisGaps#tablets}) as a healthy node other than {@code besides}
   * lists them, asking the healthy nodes in turn for up to {@link #MANAGEMENT}.
   */
  private List<String[]> tablets(String besides) throws InterruptedException, Unavailable {
    long deadline = System.nanoTime() + MANAGEMENT.toNanos();
    for (int turn = 0; ; turn++) {
      List<Life> ask = cluster.healthy().stream().filter(l -> !l.name().equals(besides)).toList();
      if (!ask.isEmpty()) {
        try {
          List<String[]> t = NemesisGaps.tablets(ask.get(turn % ask.size()).jvm());
          if (!t.isEmpty()) {
            return t;
          }
        } catch (IOException notNow) {
          // that node did not answer in time; ask the next
        }
      }
      if (System.nanoTime() > deadline) {
        throw new Unavailable("no node listed the tablets within " + MANAGEMENT.toSeconds() + " s");
      }
      Thread.sleep(500);
    }
  }

  private void split(Step s) throws IOException, InterruptedException, Unavailable {
    int range = s.pick() % NemesisLoad.RANGES;
    List<Life> healthy = cluster.healthy();
    Life via = healthy.get(s.pick() % healthy.size());
    int before = tablets("").size();
    int acked = load.burst(range, s.number(), via);
    report.event(acked + " rows of the burst acknowledged through " + via.label());
    long deadline = System.nanoTime() + CHANGE.toNanos();
    int after = before;
    while (after <= before && System.nanoTime() < deadline) {
      Thread.sleep(500);
      after = tablets("").size();
    }
    report.event("tablets of t: " + before + " before the burst, " + after + " now"
        + (after > before ? "" : " (no split within " + CHANGE.toSeconds() + " s)"));
  }

  /** Tablets of t that start at or after "z". */
  private int zTablets() throws InterruptedException, Unavailable {
    return (int) tablets("").stream()
        .filter(t -> t[1] != null && t[1].compareTo("z") >= 0).count();
  }

  /** Waits up to {@link #CHANGE} until the count of z tablets passes {@code done}; notes whether it did. */
  private void awaitTablets(Predicate<Integer> done, String what) throws InterruptedException, Unavailable {
    long deadline = System.nanoTime() + CHANGE.toNanos();
    while (System.nanoTime() < deadline) {
      int n = zTablets();
      if (done.test(n)) {
        report.event(what + ": " + n + " z tablets now");
        return;
      }
      Thread.sleep(500);
    }
    if (!what.isEmpty()) {
      report.event("not within " + CHANGE.toSeconds() + " s: " + what + " (" + zTablets() + " z tablets now)");
    }
  }
}
