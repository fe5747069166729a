package io.tabula.bench;

import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The Markdown report of {@link ChangeStreamBench}: the setup, the writes per second of both
 * tables, the delay from a write to its reader, the change log kept per GB written, and what
 * the node logged. Immutable.
 */
record ChangeStreamReport(Setup setup, List<Round> rounds, Writes plain, Writes streamed, Delays delays,
    Reader reader, Kept kept, NodeLog log) {

  /** How the run was made, the machine around it, and the JVM's garbage collections during the rounds. */
  record Setup(String command, boolean quick, String jvmOptions, String loadBefore, String loadAfter,
      double readySeconds, int writers, int valueBytes, int rounds, double seconds, double warmUpSeconds,
      long heartbeatMs, long gcCount, long gcMillis) {}

  /** One round: which table went first, both tables' writes per second, the reader's backlog after its window. */
  record Round(String first, double plainPerSecond, double streamedPerSecond, long backlog) {}

  /** Nearest-rank p50, p99 and the largest of n values, in nanoseconds. */
  record Spread(int n, long p50, long p99, long max) {
    /** The spread of {@code sorted} (ascending); all zero when it is empty. */
    static Spread of(long[] sorted) {
      return sorted.length == 0 ? new Spread(0, 0, 0, 0) : new Spread(sorted.length,
          Percentiles.nearestRank(sorted, 0.50), Percentiles.nearestRank(sorted, 0.99), sorted[sorted.length - 1]);
    }
  }

  /** A table's timed writes: how many, over how long, and the MutateRow calls' latencies. */
  record Writes(String table, long writes, long nanos, Spread latency) {
    double perSecond() {
      return writes * 1e9 / nanos;
    }
  }

  /**
   * The timed writes' way to the reader: from the call's return (negative differences clamped
   * to 0, {@code clamped} of them) and from its start; writes the reader never saw; changes it
   * saw (any write), saw a second time, or could not match to a write; the slow ones' stalls.
   */
  record Delays(Spread fromReturn, Spread fromCall, int clamped, int missing, long seen, long seenTwice,
      long unknown, List<Stall> stalls) {}

  /**
   * Changes that reached the reader over {@link ChangeStreamBench#SLOW_NANOS} after their
   * acknowledgement, acknowledged less than {@link ChangeStreamBench#STALL_GAP_NANOS} apart:
   * the round whose {@code streamed} window they fell in, how far into it the first was
   * acknowledged, how many, and the longest delay.
   */
  record Stall(int round, double secondsIntoWindow, int changes, long longestNanos) {}

  /** The reader's side: how long after the last write it had every change (-1: never), and its streams. */
  record Reader(double catchUpMs, long heartbeats, int closeStreams, int reopened, int givenUp,
      RuntimeException firstFailure) {}

  /**
   * The streamed table's change log on disk, at the end of writing and after the node's clean
   * stop, against the writes acknowledged and the bytes of one row (key and value); and the
   * plain table's (none expected).
   */
  record Kept(long acknowledged, long rowBytes, ChangeLogFiles atEnd, ChangeLogFiles afterStop,
      ChangeLogFiles plainTable, double stopSeconds) {}

  /** Warnings and errors logged in the bench's JVM, the node's among them, and the first few. */
  record NodeLog(int warnings, int errors, List<String> first) {}

  String markdown() {
    StringBuilder s = new StringBuilder();
    s.append("# Change streams: what a stream costs the writes, how soon its reader sees them, what it keeps\n\n");
    s.append(ResultsFile.machineLine());
    s.append("Command: `").append(setup.command).append("`");
    if (setup.quick) {
      s.append(" (**quick mode**: short windows, so these figures are rough)");
    }
    s.append(". JVM options: `").append(setup.jvmOptions).append("`.\n\n");
    s.append(String.format(Locale.ROOT, "Load average before: %s; after: %s. The node was ready (its own "
        + "warm-up done) %.1f s after its start; nothing before that is timed.%n%n", setup.loadBefore,
        setup.loadAfter, setup.readySeconds));
    s.append(String.format(Locale.ROOT, "One Tabula node in the bench's JVM with its default settings (commit log "
        + "fsynced before each acknowledgement), the official Java client on 127.0.0.1. Two tables of one family: "
        + "`%s` without a change stream, `%s` with one (retention 1 day, `addChangeStreamRetention`), which one "
        + "reader follows from before its first write to the end (one `ReadChangeStream` per partition, "
        + "heartbeats every %,d ms, `CloseStream`s followed). %d writer threads write new rows of one %,d-byte "
        + "value (keys of %d bytes), one `MutateRow` at a time each. Each of %d rounds gives each table a %.0f s "
        + "window, the first table alternating; an untimed %.0f s window per table warmed up first. The writers, "
        + "the reader and the node share the machine's cores and one JVM, whose garbage collections during the "
        + "rounds numbered %,d and took %,d ms together (as the JVM counts them: G1's pauses).%n%n",
        ChangeStreamBench.PLAIN, ChangeStreamBench.STREAMED, setup.heartbeatMs, setup.writers, setup.valueBytes,
        Dataset.KEY_BYTES, setup.rounds, setup.seconds, setup.warmUpSeconds, setup.gcCount, setup.gcMillis));
    writes(s);
    delays(s);
    kept(s);
    nodeLog(s);
    return s.toString();
  }

  private void writes(StringBuilder s) {
    double ratio = streamed.perSecond() / plain.perSecond();
    s.append("## 1. Writes per second\n\n");
    s.append("| table | timed writes | seconds | writes/s | MutateRow p50 ms | p99 ms | max ms |\n");
    s.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (Writes w : List.of(plain, streamed)) {
      s.append(String.format(Locale.ROOT, "| `%s` | %,d | %.1f | %,.0f | %.2f | %.2f | %.1f |%n", w.table, w.writes,
          w.nanos / 1e9, w.perSecond(), ms(w.latency.p50), ms(w.latency.p99), ms(w.latency.max)));
    }
    double[] perRound = rounds.stream().mapToDouble(r -> r.streamedPerSecond / r.plainPerSecond).sorted().toArray();
    double median = perRound.length % 2 == 1 ? perRound[perRound.length / 2]
        : (perRound[perRound.length / 2 - 1] + perRound[perRound.length / 2]) / 2;
    s.append(String.format(Locale.ROOT, "%n**With the stream: %.3f of the writes per second without it, %.1f%% "
        + "%s** (pooled over the rounds; target: at most 15%% fewer, %s). The median of the rounds' ratios: "
        + "%.3f.%n%n", ratio, Math.abs(1 - ratio) * 100, ratio <= 1 ? "fewer" : "more",
        ratio >= 0.85 ? "met" : "**not met**", median));
    s.append("| round | first | `plain` writes/s | `streamed` writes/s | streamed / plain "
        + "| reader's backlog after the `streamed` window |\n|---:|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < rounds.size(); i++) {
      Round r = rounds.get(i);
      s.append(String.format(Locale.ROOT, "| %d | `%s` | %,.0f | %,.0f | %.3f | %,d |%n", i + 1, r.first,
          r.plainPerSecond, r.streamedPerSecond, r.streamedPerSecond / r.plainPerSecond, r.backlog));
    }
    s.append("\nThe backlog is the writes acknowledged but not yet seen by the reader when the writers stopped.\n\n");
  }

  private void delays(StringBuilder s) {
    Delays d = delays;
    s.append("## 2. From a write's acknowledgement to its reader\n\n");
    s.append("Each timed write into `streamed` is stamped when its `MutateRow` returned; the reader stamps its "
        + "change when the client hands it over. Same JVM, same monotonic clock.\n\n");
    s.append("| from | changes | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|\n");
    s.append(String.format(Locale.ROOT, "| `MutateRow` returned (negative clamped to 0) | %,d | %.2f | %.2f | %.1f |%n",
        d.fromReturn.n, ms(d.fromReturn.p50), ms(d.fromReturn.p99), ms(d.fromReturn.max)));
    s.append(String.format(Locale.ROOT, "| `MutateRow` called | %,d | %.2f | %.2f | %.1f |%n", d.fromCall.n,
        ms(d.fromCall.p50), ms(d.fromCall.p99), ms(d.fromCall.max)));
    s.append(String.format(Locale.ROOT, "%n%,d of the %,d changes (%.1f%%) reached the reader before their writer's "
        + "`MutateRow` returned; their delay counts as 0. ", d.clamped, d.fromReturn.n,
        d.fromReturn.n == 0 ? 0 : 100.0 * d.clamped / d.fromReturn.n));
    s.append(String.format(Locale.ROOT, "Timed writes the reader never saw: %,d. Changes seen in all: %,d "
        + "(warm-up included), seen twice: %,d, not matching a write: %,d. ", d.missing, d.seen, d.seenTwice,
        d.unknown));
    stalls(s, d.stalls);
    s.append(reader.catchUpMs < 0 ? "**The reader still lacked changes when the bench stopped waiting.** "
        : String.format(Locale.ROOT, "The reader had every change %.0f ms after the last write returned. ",
            reader.catchUpMs));
    s.append(String.format(Locale.ROOT, "Heartbeats: %,d; `CloseStream`s followed: %d; streams opened again after "
        + "a failure: %d; given up: %d.", reader.heartbeats, reader.closeStreams, reader.reopened, reader.givenUp));
    if (reader.firstFailure != null) {
      s.append(" First failure: `").append(reader.firstFailure).append("`.");
    }
    s.append("\n\n");
  }

  private static void stalls(StringBuilder s, List<Stall> stalls) {
    int slow = stalls.stream().mapToInt(Stall::changes).sum();
    s.append(String.format(Locale.ROOT, "Changes that took over %d ms after their acknowledgement: %,d",
        ChangeStreamBench.SLOW_NANOS / 1_000_000, slow));
    if (!stalls.isEmpty()) {
      s.append(String.format(Locale.ROOT, ", in %d stall%s (such changes acknowledged under %d s apart): ",
          stalls.size(), stalls.size() == 1 ? "" : "s", ChangeStreamBench.STALL_GAP_NANOS / 1_000_000_000));
      s.append(stalls.stream().limit(8).map(t -> String.format(Locale.ROOT, "round %d, %.1f s into the window, "
          + "%,d changes, the longest %.0f ms", t.round(), t.secondsIntoWindow(), t.changes(), ms(t.longestNanos())))
          .collect(Collectors.joining("; ")));
      if (stalls.size() > 8) {
        s.append("; ...");
      }
    }
    s.append(". ");
  }

  private void kept(StringBuilder s) {
    Kept k = kept;
    s.append("## 3. Change log kept per GB written\n\n");
    s.append(String.format(Locale.ROOT, "Bytes of the `streamed` table's segments (`tables/streamed/<tablet>/"
        + "changes/*.chg`) over the logical bytes of the writes they hold (row key + value, %,d bytes a write), "
        + "scaled to 1 GB (10^9 bytes). A segment's name gives its first and last sequence, so the writes it "
        + "holds are counted exactly; the rest are still in memtables. %,d writes acknowledged in all.%n%n",
        k.rowBytes, k.acknowledged));
    s.append("| when | writes in segments | share of the writes | tablets | segments | bytes | "
        + "MB of change log per GB written |\n|---|---:|---:|---:|---:|---:|---:|\n");
    kept(s, "end of writing", k.atEnd, k);
    kept(s, String.format(Locale.ROOT, "after the node's clean stop (memtables flushed, %.1f s)", k.stopSeconds),
        k.afterStop, k);
    s.append(String.format(Locale.ROOT, "%nSequences per segment after the stop, oldest first: %s (one write is one "
        + "sequence). The `plain` table's change log: %,d segments, %,d bytes.%n%n", k.afterStop.perSegment().stream()
        .map(n -> String.format(Locale.ROOT, "%,d", n)).collect(Collectors.joining(", ")), k.plainTable.segments(),
        k.plainTable.bytes()));
  }

  private static void kept(StringBuilder s, String when, ChangeLogFiles f, Kept k) {
    double perGb = f.sequences() == 0 ? Double.NaN : f.bytes() * 1e3 / (f.sequences() * (double) k.rowBytes);
    s.append(String.format(Locale.ROOT, "| %s | %,d | %.1f%% | %d | %d | %,d | %s |%n", when, f.sequences(),
        100.0 * f.sequences() / k.acknowledged, f.tablets(), f.segments(), f.bytes(),
        Double.isNaN(perGb) ? "n/a" : String.format(Locale.ROOT, "%,.0f", perGb)));
  }

  private void nodeLog(StringBuilder s) {
    s.append("## The node's log\n\n");
    s.append(String.format(Locale.ROOT, "Warnings: %d; errors: %d (the bench's JVM, the node's included).",
        log.warnings, log.errors));
    if (!log.first.isEmpty()) {
      s.append(" The first:\n\n");
      for (String line : log.first) {
        s.append("- `").append(line.replace('`', '\'').replace('\n', ' ')).append("`\n");
      }
    }
    s.append("\n");
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
