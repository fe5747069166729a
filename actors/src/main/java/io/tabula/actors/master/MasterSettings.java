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
 */
public record MasterSettings(int maxMoves, Duration moveTimeout, Duration absentFor, Duration tick) {
  /** For tests that run a master without a cluster. */
  public static final MasterSettings DEFAULTS = new MasterSettings(2, Duration.ofSeconds(60), Duration.ofSeconds(30),
      Duration.ofSeconds(1));

  public static MasterSettings from(Config master) {
    return new MasterSettings(master.getInt("max-concurrent-moves"), master.getDuration("move-timeout"),
        master.getDuration("place-tablets-of-absent-node-after"), master.getDuration("tick"));
  }
}
