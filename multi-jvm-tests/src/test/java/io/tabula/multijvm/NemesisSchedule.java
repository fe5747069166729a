package io.tabula.multijvm;

import java.util.List;
import java.util.SplittableRandom;

/**
 * The nemesis scenario's schedule, drawn one step at a time from a {@link SplittableRandom}
 * seeded once: the same seed draws the same steps, with the same parameters, in the same order
 * (what a step resolves at run time, such as which node is the master's or which tablets
 * exist then, is printed with it). Every step draws the same number of values whatever its
 * kind, so the stream never shifts.
 *
 * <p>Node faults, each on one node at a time (the others stay a majority of four): kill -9 and
 * a start again under the same name; SIGSTOP and SIGCONT; a restart under the same name while
 * the earlier life is stopped, then SIGCONT of the earlier life; a cut from the other nodes'
 * remoting traffic, healed; a disk that refuses fsync; a drain. Changes to the tablets: a move,
 * a split by size, a split by load (the z range made hot), a merge (the z range let cool).
 *
 * <p>Not thread-safe: one scenario thread draws.
 */
final class NemesisSchedule {
  /** What a step does; {@code weight} is its share of the draws. */
  enum Kind {
    KILL("kill -9", 3, true),
    STOP("SIGSTOP", 3, true),
    RESTART_WHILE_STOPPED("restart under the same name while stopped", 2, true),
    PARTITION("cut off from the other nodes", 2, true),
    FSYNC("disk refuses fsync", 1, true),
    DRAIN("drain", 1, true),
    MOVE("move", 2, false),
    SPLIT("split by size", 1, false),
    HOT_SPLIT("split by load", 1, false),
    MERGE("merge", 1, false);

    final String label;
    final int weight;
    /** Whether the step makes one node faulty (it is stopped, cut off, killed or drained for a while). */
    final boolean nodeFault;

    Kind(String label, int weight, boolean nodeFault) {
      this.label = label;
      this.weight = weight;
      this.nodeFault = nodeFault;
    }
  }

  /**
   * One step as drawn.
   *
   * @param number 1, 2, ...
   * @param target a node name, or {@link #MASTER} for whichever node runs the master then
   * @param seconds how long the fault lasts (stopped, down, cut off, the two lives overlapping)
   * @param moveFirst for a node fault: first ask the master to move one of the target's tablets
   *     away, so the fault may strike during a move
   * @param pick a free draw: which tablet, which range, which rows
   * @param pauseAfter seconds to wait once the cluster is healthy again, before the next step
   */
  record Step(int number, Kind kind, String target, int seconds, boolean moveFirst, int pick, int pauseAfter) {}

  /** The target that means the master's node at the time the step runs. */
  static final String MASTER = "master";

  private final SplittableRandom random;
  private final List<String> names;
  private int drawn;
  /** Whether the z range is being read hot (after a HOT_SPLIT, until a MERGE). */
  private boolean zHot;

  /** The kinds of step drawn; every kind unless {@code tabula.nemesis.faults} names some. */
  private final java.util.Set<Kind> kinds;

  NemesisSchedule(long seed, List<String> names) {
    this(seed, names, kinds(System.getProperty("tabula.nemesis.faults", "")));
  }

  NemesisSchedule(long seed, List<String> names, java.util.Set<Kind> kinds) {
    this.random = new SplittableRandom(seed);
    this.names = List.copyOf(names);
    this.kinds = java.util.EnumSet.copyOf(kinds);
  }

  /**
   * The kinds named in {@code list} (comma-separated {@link Kind} names, such as {@code
   * KILL,STOP}), or every kind if it is blank: a schedule of a few kinds measures what each
   * costs the clients (bench/run-nemesis --faults).
   */
  static java.util.Set<Kind> kinds(String list) {
    if (list.isBlank()) {
      return java.util.EnumSet.allOf(Kind.class);
    }
    java.util.Set<Kind> out = java.util.EnumSet.noneOf(Kind.class);
    for (String k : list.split(",")) {
      out.add(Kind.valueOf(k.trim()));
    }
    return out;
  }

  /** Draws the next step. */
  Step next() {
    int total = 0;
    for (Kind k : Kind.values()) {
      total += allowed(k) ? k.weight : 0;
    }
    int r = random.nextInt(total);
    Kind kind = null;
    for (Kind k : Kind.values()) {
      if (!allowed(k)) {
        continue;
      }
      r -= k.weight;
      if (r < 0) {
        kind = k;
        break;
      }
    }
    String target = random.nextInt(10) < 3 ? MASTER : names.get(random.nextInt(names.size()));
    int seconds = 2 + random.nextInt(24);
    boolean moveFirst = random.nextInt(3) == 0;
    int pick = random.nextInt(1 << 20);
    int pauseAfter = 1 + random.nextInt(5);
    if (kind == Kind.HOT_SPLIT) {
      zHot = true;
    } else if (kind == Kind.MERGE) {
      zHot = false;
    }
    return new Step(++drawn, kind, target, seconds, moveFirst, pick, pauseAfter);
  }

  private boolean allowed(Kind k) {
    if (!kinds.contains(k)) {
      return false;
    }
    return switch (k) {
      case HOT_SPLIT -> !zHot;
      case MERGE -> zHot;
      default -> true;
    };
  }
}
