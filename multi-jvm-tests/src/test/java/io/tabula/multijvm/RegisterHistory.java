package io.tabula.multijvm;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.LongFunction;

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
 * <p>Each operation may name the client it went through ({@code via}: a node, a life of one),
 * so a violation can show who saw what. {@link #violations} checks every row and returns each
 * row's first violation as a {@link Violation}, which names the row and the span in question,
 * with times shown by a given clock (relative to a scenario's start, say).
 *
 * <p>Thread-safe for recording; {@link #check} and {@link #violations} run once recording is over.
 */
final class RegisterHistory {
  /** Answer time of a write whose outcome is unknown. */
  static final long NEVER = Long.MAX_VALUE;
  /** The value a read records when the row has no cell. */
  private static final String EMPTY = "\u0000empty";

  /**
   * One operation: a write of {@code value}, or a read that saw it; times in nanoseconds;
   * {@code via}, the client or node it went through ("" if not said).
   */
  record Op(boolean write, String row, String value, long invoked, long answered, String via) {}

  /**
   * A row whose history is not linearizable: the rule broken ({@link #getMessage}), the row,
   * and the span (nanoseconds) of the operations in question, to show the row's history around it.
   */
  static final class Violation extends AssertionError {
    final String row;
    final long from;
    final long to;

    Violation(String row, long from, long to, String message) {
      super(message);
      this.row = row;
      this.from = from;
      this.to = to;
    }
  }

  private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();

  /** Records a write of {@code value} to {@code row}; {@code answered} is {@link #NEVER} if its outcome is unknown. */
  void write(String row, String value, long invoked, long answered) {
    write(row, value, invoked, answered, "");
  }

  /** As {@link #write(String, String, long, long)}, through {@code via}. */
  void write(String row, String value, long invoked, long answered, String via) {
    ops.add(new Op(true, row, value, invoked, answered, via));
  }

  /** Records a read of {@code row} that saw {@code value} (null: no cell). */
  void read(String row, String value, long invoked, long answered) {
    read(row, value, invoked, answered, "");
  }

  /** As {@link #read(String, String, long, long)}, through {@code via}. */
  void read(String row, String value, long invoked, long answered, String via) {
    ops.add(new Op(false, row, value == null ? EMPTY : value, invoked, answered, via));
  }

  /** Every operation recorded so far, in no particular order. */
  List<Op> ops() {
    return new ArrayList<>(ops);
  }

  int size() {
    return ops.size();
  }

  /**
   * Checks every row's history; returns a one-line summary, or throws an {@link AssertionError}
   * that names the row, the rule broken and the operations involved.
   */
  String check() {
    Map<String, List<Op>> byRow = byRow();
    long reads = 0;
    long writes = 0;
    long unknown = 0;
    for (Map.Entry<String, List<Op>> e : byRow.entrySet()) {
      checkRow(e.getKey(), e.getValue(), Long::toString);
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

  /**
   * Checks every row's history; returns each row's first violation (none: every row's history
   * is linearizable), its times shown by {@code clock}.
   */
  List<Violation> violations(LongFunction<String> clock) {
    List<Violation> out = new ArrayList<>();
    byRow().forEach((row, rowOps) -> {
      try {
        checkRow(row, rowOps, clock);
      } catch (Violation v) {
        out.add(v);
      }
    });
    return out;
  }

  /**
   * Row {@code row}'s operations under way within [{@code from}, {@code to}], in order of
   * invocation, repeated reads folded ({@link #folded}), times shown by {@code clock}.
   */
  String rowHistory(String row, long from, long to, LongFunction<String> clock) {
    return folded(ops.stream().filter(op -> op.row().equals(row))
        .filter(op -> op.invoked() <= to && (op.answered() >= from)).toList(), clock);
  }

  private Map<String, List<Op>> byRow() {
    Map<String, List<Op>> byRow = new TreeMap<>();
    for (Op op : ops) {
      byRow.computeIfAbsent(op.row(), r -> new ArrayList<>()).add(op);
    }
    return byRow;
  }

  private record Zone(String value, long from, long to, boolean forward) {}

  private static void checkRow(String row, List<Op> ops, LongFunction<String> clock) {
    Map<String, Op> writeOf = new HashMap<>();
    writeOf.put(EMPTY, new Op(true, row, EMPTY, Long.MIN_VALUE, Long.MIN_VALUE, ""));
    for (Op op : ops) {
      if (op.write() && writeOf.put(op.value(), op) != null) {
        throw new Violation(row, op.invoked(), op.invoked(), "row " + row + ": two writes of value " + op.value()
            + "; values must be unique");
      }
    }
    Map<String, long[]> clusters = new HashMap<>(); // value -> {earliest answer, latest invocation}
    for (Op op : ops) {
      if (op.write()) {
        continue;
      }
      Op w = writeOf.get(op.value());
      if (w == null) {
        throw new Violation(row, op.invoked(), op.answered(), "row " + row + ": a read saw " + show(op.value())
            + ", which no write wrote:\n" + line(op, clock));
      }
      if (w.invoked() > op.answered()) {
        throw new Violation(row, op.invoked(), w.invoked(), "row " + row + ": a read saw " + show(op.value())
            + " before its write began:\n" + line(op, clock) + line(w, clock));
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
        throw new Violation(row, a.from(), Math.max(a.to(), b.to()), "row " + row + ": not linearizable: "
            + show(a.value()) + " and " + show(b.value()) + " must each be the row's value over overlapping spans ("
            + span(a, clock) + " and " + span(b, clock) + "): a read saw one while the other had to be current\n"
            + ops(ops, a.value(), b.value(), clock));
      }
    }
    // The forward zones are disjoint now, sorted by start: only the last one starting before a
    // backward zone can hold it.
    long[] starts = forward.stream().mapToLong(Zone::from).toArray();
    for (Zone b : backward) {
      int i = java.util.Arrays.binarySearch(starts, b.from());
      i = i < 0 ? -i - 2 : i - 1;
      if (i >= 0) {
        Zone f = forward.get(i);
        if (f.from() < b.from() && b.to() < f.to()) {
          throw new Violation(row, f.from(), f.to(), "row " + row + ": not linearizable: " + show(b.value())
              + " was written and read within " + span(b, clock) + ", inside the span " + span(f, clock)
              + " over which " + show(f.value()) + " had to stay the row's value (a lost write, or a stale read)\n"
              + ops(ops, b.value(), f.value(), clock));
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

  private static String span(Zone z, LongFunction<String> clock) {
    return "[" + time(z.from(), clock) + ", " + time(z.to(), clock) + "]";
  }

  private static String time(long t, LongFunction<String> clock) {
    return t == Long.MIN_VALUE ? "start" : t == NEVER ? "never" : clock.apply(t);
  }

  private static String ops(List<Op> ops, String a, String b, LongFunction<String> clock) {
    return folded(ops.stream().filter(op -> op.value().equals(a) || op.value().equals(b)).toList(), clock);
  }

  /**
   * {@code ops} one a line in order of invocation, except that reads of one value through one
   * client, one after another, are folded into one line (how many, and the first's and the
   * last's times).
   */
  private static String folded(List<Op> ops, LongFunction<String> clock) {
    record Entry(long at, String text) {}
    List<Entry> out = new ArrayList<>();
    Map<String, Op[]> run = new HashMap<>(); // via -> {first, last} of its current run of reads
    Map<String, Integer> count = new HashMap<>();
    java.util.function.Consumer<String> close = via -> {
      Op[] r = run.remove(via);
      int n = count.remove(via);
      out.add(new Entry(r[0].invoked(), n == 1 ? line(r[0], clock) : "  read  " + show(r[0].value()) + " x" + n
          + " via " + r[0].via() + ": the first invoked " + time(r[0].invoked(), clock) + " answered "
          + time(r[0].answered(), clock) + ", the last invoked " + time(r[1].invoked(), clock) + " answered "
          + time(r[1].answered(), clock) + "\n"));
    };
    for (Op op : ops.stream().sorted(Comparator.comparingLong(Op::invoked)).toList()) {
      Op[] r = run.get(op.via());
      if (!op.write() && r != null && r[0].value().equals(op.value())) {
        r[1] = op;
        count.merge(op.via(), 1, Integer::sum);
        continue;
      }
      if (r != null) {
        close.accept(op.via());
      }
      if (op.write()) {
        out.add(new Entry(op.invoked(), line(op, clock)));
      } else {
        run.put(op.via(), new Op[] {op, op});
        count.put(op.via(), 1);
      }
    }
    new ArrayList<>(run.keySet()).forEach(close);
    out.sort(Comparator.comparingLong(Entry::at));
    StringBuilder sb = new StringBuilder();
    out.forEach(e -> sb.append(e.text()));
    return sb.toString();
  }

  /** One operation as a line: what, which value, when invoked and answered, and through whom. */
  private static String line(Op op, LongFunction<String> clock) {
    return "  " + (op.write() ? "write " : "read  ") + show(op.value()) + " invoked " + time(op.invoked(), clock)
        + " answered " + (op.write() && op.answered() == NEVER ? "never (outcome unknown)"
        : time(op.answered(), clock)) + (op.via().isEmpty() ? "" : " via " + op.via()) + "\n";
  }
}
