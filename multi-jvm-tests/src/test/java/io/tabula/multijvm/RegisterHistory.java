package io.tabula.multijvm;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A history of operations on registers (one cell per row, each write with a value no other
 * write uses), as clients observed them, and a check that each row's history is linearizable.
 *
 * <p>Recorded per operation: when it was invoked and when it answered (the test process's
 * {@code System.nanoTime}), and its outcome. A write that answered OK is acknowledged; a
 * write that failed or timed out has an unknown outcome (it may have been applied, later even),
 * so its answer time is taken as never. A read that answered records the value it saw (null:
 * no cell); a read that failed had no effect and is not recorded.
 *
 * <p>The check, per row, with the read-from relation known because values are unique (Gibbons
 * and Korach, "Testing shared memories", 1997; the zone test):
 * <ol>
 *   <li>every read sees a value some write wrote (or none, the initial state), and that write
 *       was invoked before the read answered;
 *   <li>for each value, its <em>cluster</em> is its write and the reads that saw it; the
 *       cluster's zone runs from the earliest answer to the latest invocation in it. If the
 *       earliest answer comes first, the zone is <em>forward</em>: the value must be the
 *       register's value throughout it. Otherwise it is <em>backward</em>: the value's write
 *       and reads can all take effect at one instant within it;
 *   <li>the history is linearizable exactly when no two forward zones overlap and no backward
 *       zone lies inside a forward zone.
 * </ol>
 * Acknowledged writes nobody read still count (a write lost behind a later read of an older
 * value makes its backward zone fall inside that value's forward zone); writes of unknown
 * outcome nobody read are left out, since they may never have happened. The initial empty
 * state is a value written before everything. A final read of every row after the load ends
 * makes a lost last write visible.
 *
 * <p>Thread-safe for recording; {@link #check} runs once recording is over.
 */
final class RegisterHistory {
  /** Answer time of a write whose outcome is unknown. */
  static final long NEVER = Long.MAX_VALUE;
  /** The value a read records when the row has no cell. */
  private static final String EMPTY = "\u0000empty";

  /** One operation: a write of {@code value}, or a read that saw it; times in nanoseconds. */
  record Op(boolean write, String row, String value, long invoked, long answered) {}

  private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();

  /** Records a write of {@code value} to {@code row}; {@code answered} is {@link #NEVER} if its outcome is unknown. */
  void write(String row, String value, long invoked, long answered) {
    ops.add(new Op(true, row, value, invoked, answered));
  }

  /** Records a read of {@code row} that saw {@code value} (null: no cell). */
  void read(String row, String value, long invoked, long answered) {
    ops.add(new Op(false, row, value == null ? EMPTY : value, invoked, answered));
  }

  int size() {
    return ops.size();
  }

  /**
   * Checks every row's history; returns a one-line summary, or throws an {@link AssertionError}
   * that names the row, the rule broken and the operations involved.
   */
  String check() {
    Map<String, List<Op>> byRow = new TreeMap<>();
    for (Op op : ops) {
      byRow.computeIfAbsent(op.row(), r -> new ArrayList<>()).add(op);
    }
    long reads = 0;
    long writes = 0;
    long unknown = 0;
    for (Map.Entry<String, List<Op>> e : byRow.entrySet()) {
      checkRow(e.getKey(), e.getValue());
      for (Op op : e.getValue()) {
        if (!op.write()) {
          reads++;
        } else if (op.answered() == NEVER) {
          unknown++;
        } else {
          writes++;
        }
      }
    }
    return String.format("%d rows: %d acknowledged writes, %d writes of unknown outcome, %d reads; each row's "
        + "history linearizable", byRow.size(), writes, unknown, reads);
  }

  private record Zone(String value, long from, long to, boolean forward) {}

  private static void checkRow(String row, List<Op> ops) {
    Map<String, Op> writeOf = new HashMap<>();
    writeOf.put(EMPTY, new Op(true, row, EMPTY, Long.MIN_VALUE, Long.MIN_VALUE));
    for (Op op : ops) {
      if (op.write() && writeOf.put(op.value(), op) != null) {
        throw new AssertionError("row " + row + ": two writes of value " + op.value() + "; values must be unique");
      }
    }
    Map<String, long[]> clusters = new HashMap<>(); // value -> {earliest answer, latest invocation}
    for (Op op : ops) {
      if (op.write()) {
        continue;
      }
      Op w = writeOf.get(op.value());
      if (w == null) {
        throw new AssertionError("row " + row + ": a read saw " + show(op.value()) + ", which no write wrote: " + op);
      }
      if (w.invoked() > op.answered()) {
        throw new AssertionError("row " + row + ": a read saw " + show(op.value()) + " before its write began: "
            + op + " before " + w);
      }
      join(clusters, op);
    }
    for (Op w : writeOf.values()) {
      boolean read = clusters.containsKey(w.value());
      if (read || (w.answered() != NEVER && !w.value().equals(EMPTY))) {
        join(clusters, w);
      }
    }
    List<Zone> forward = new ArrayList<>();
    List<Zone> backward = new ArrayList<>();
    clusters.forEach((value, c) -> {
      if (c[0] < c[1]) {
        forward.add(new Zone(value, c[0], c[1], true));
      } else {
        backward.add(new Zone(value, c[1], c[0], false));
      }
    });
    forward.sort(Comparator.comparingLong(Zone::from));
    for (int i = 1; i < forward.size(); i++) {
      Zone a = forward.get(i - 1);
      Zone b = forward.get(i);
      if (b.from() < a.to()) {
        throw new AssertionError("row " + row + ": not linearizable: " + show(a.value()) + " and " + show(b.value())
            + " must each be the row's value over overlapping spans (" + span(a) + " and " + span(b)
            + "): a read saw one while the other had to be current\n" + ops(ops, a.value(), b.value()));
      }
    }
    for (Zone b : backward) {
      for (Zone f : forward) {
        if (f.from() < b.from() && b.to() < f.to()) {
          throw new AssertionError("row " + row + ": not linearizable: " + show(b.value()) + " was written and read "
              + "within " + span(b) + ", inside the span " + span(f) + " over which " + show(f.value())
              + " had to stay the row's value (a lost write, or a stale read)\n" + ops(ops, b.value(), f.value()));
        }
      }
    }
  }

  private static void join(Map<String, long[]> clusters, Op op) {
    long[] c = clusters.computeIfAbsent(op.value(), v -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE});
    c[0] = Math.min(c[0], op.answered());
    c[1] = Math.max(c[1], op.invoked());
  }

  private static String show(String value) {
    return value.equals(EMPTY) ? "no cell" : "value " + value;
  }

  private static String span(Zone z) {
    return "[" + time(z.from()) + ", " + time(z.to()) + "]";
  }

  private static String time(long t) {
    return t == Long.MIN_VALUE ? "start" : t == NEVER ? "never" : Long.toString(t);
  }

  private static String ops(List<Op> ops, String a, String b) {
    StringBuilder sb = new StringBuilder();
    ops.stream().filter(op -> op.value().equals(a) || op.value().equals(b))
        .sorted(Comparator.comparingLong(Op::invoked))
        .forEach(op -> sb.append("  ").append(op.write() ? "write " : "read  ").append(show(op.value()))
            .append(" invoked ").append(time(op.invoked())).append(" answered ").append(time(op.answered()))
            .append('\n'));
    return sb.toString();
  }
}
