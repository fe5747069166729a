package io.tabula.actors.master;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * The {@code tabula.master} settings, read once.
 *
 * @param maxMoves how many tablet moves may be under way at once
 * @param moveTimeout how long a move may take before the master stops waiting for it
 * @param absentFor how long a node may be missing from the cluster before the master places
 *     its tablets elsewhere
 * @param tick how often the master looks at the cluster for tablets to place
 * @param balanceEvery how often the master balances the nodes (also when one joins)
 * @param movedStays how long a tablet that moved stays where it went before balancing moves it again
 * @param mergeBelowBytes two adjacent tablets merge only if together they are smaller than this
 * @param mergeColdFor ... and both have been cold this long
 * @param coldOpsPerSecond a tablet is cold below this many reads and writes per second
 * @param fenceAfter how long a node may be unreachable before the master, on a side holding a
 *     majority, fences and downs it and places its tablets elsewhere (zero: never; the
 *     split-brain resolver and {@code absentFor} decide)
 * @param sweepEvery how often the master deletes the SSTables no tablet references (zero: never)
 * @param keyVizColumn the time one column of the key visualizer covers
 * @param keyVizColumns how many columns the key visualizer keeps
 * @param hotOps a tablet is hot from this many reads and writes (rows) per second ...
 * @param hotShare ... and more than this share of a node's fair part of the cluster's load
 * @param hotFor ... for this long; then it splits at the row that halves its load (zero: never)
 * @param closeReportWait how long a tablet's open waits for a live node whose commit log the
 *     tablet's placement names to report that it closed the tablet (a hand-over's report on its
 *     way) before the master fences that log (docs/fencing.md)
 */
public record MasterSettings(int maxMoves, Duration moveTimeout, Duration absentFor, Duration tick,
    Duration balanceEvery, Duration movedStays, long mergeBelowBytes, Duration mergeColdFor,
    double coldOpsPerSecond, Duration fenceAfter, Duration sweepEvery, Duration keyVizColumn, int keyVizColumns,
    double hotOps, double hotShare, Duration hotFor, Duration closeReportWait) {
  /** For tests that run a master without a cluster. */
  public static final MasterSettings DEFAULTS = new MasterSettings(2, Duration.ofSeconds(60), Duration.ofSeconds(30),
      Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofSeconds(60), 32L << 20, Duration.ofMinutes(10), 1.0,
      Duration.ofSeconds(2), Duration.ofMinutes(5), Duration.ofSeconds(10), 120, 1000, 0.5,
      Duration.ofSeconds(20), Duration.ofSeconds(10));

  /** The most key-visualizer columns: a view must fit one cluster message (1 MiB) with 128 bands. */
  public static final int MAX_KEY_VIZ_COLUMNS = 240;

  public MasterSettings {
    if (keyVizColumns < 1 || keyVizColumns > MAX_KEY_VIZ_COLUMNS) {
      throw new IllegalArgumentException("tabula.master.key-visualizer.columns must be 1 to " + MAX_KEY_VIZ_COLUMNS
          + ", was " + keyVizColumns);
    }
    if (keyVizColumn.toMillis() < 1) {
      throw new IllegalArgumentException("tabula.master.key-visualizer.column must be at least 1 ms, was "
          + keyVizColumn);
    }
  }

  public static MasterSettings from(Config master) {
    return new MasterSettings(master.getInt("max-concurrent-moves"), master.getDuration("move-timeout"),
        master.getDuration("place-tablets-of-absent-node-after"), master.getDuration("tick"),
        master.getDuration("balance-every"), master.getDuration("moved-tablet-stays"),
        master.getBytes("merge.below-bytes"), master.getDuration("merge.cold-for"),
        master.getDouble("merge.cold-ops-per-second"), master.getDuration("fence-unreachable-node-after"),
        master.getDuration("sweep-files-every"), master.getDuration("key-visualizer.column"),
        master.getInt("key-visualizer.columns"), master.getDouble("hot-split.min-ops-per-second"),
        master.getDouble("hot-split.share-of-a-node"), master.getDuration("hot-split.for"),
        master.getDuration("wait-for-close-report"));
  }
}
