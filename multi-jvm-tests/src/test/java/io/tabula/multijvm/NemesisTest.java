package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A randomized, seeded schedule of faults that keeps looking for a way to lose an acknowledged
 * write or serve a stale read (Jepsen's nemesis): four nodes on one root under writes and reads
 * through every node, with the official client and the Tabula client; kill -9, SIGSTOP, a
 * restart under the same name while the earlier life is stopped, a node cut off from the
 * others, a disk refusing fsync, drains, moves, splits and merges, one node faulty at a time,
 * the cluster brought back to four healthy nodes between faults. Then every acknowledged write
 * must read back, every register history must be linearizable, every tablet must serve, and
 * the tablets' ranges must cover the key space once ({@link NemesisScenario}). Prints the seed
 * first and the schedule as it is drawn; prints what each fault cost the clients.
 *
 * <p>{@code -Dtabula.seed=N} replays a schedule; {@code -Dtabula.nemesis.minutes=N} (default 4,
 * start-up included) sets how long faults are drawn; {@code -Dtabula.nemesis.report=FILE}
 * writes the report there ({@code bench/run-nemesis}). The test's time limit is the minutes
 * plus 15 (a last fault's waits are bounded, and a node may take a minute to start); every
 * process started is stopped at the end, on a failure or at the time limit too. See
 * docs/nemesis.md.
 */
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class NemesisTest {
  @Test
  void aSeededScheduleOfFaultsLosesNoAcknowledgedWriteAndServesNoStaleRead() throws Exception {
    long seed = Long.getLong("tabula.seed", ThreadLocalRandom.current().nextLong(1, 1L << 40));
    int minutes = Integer.getInteger("tabula.nemesis.minutes", 4);
    System.out.println("NemesisTest: seed " + seed + ", " + minutes + " minutes (replay with -Dtabula.seed=" + seed
        + " -Dtabula.nemesis.minutes=" + minutes + ")");
    try (ClusterFixture fixture = new ClusterFixture();
        NemesisScenario scenario = new NemesisScenario(fixture, seed, minutes)) {
      assertTimeoutPreemptively(Duration.ofMinutes(minutes + 15L), scenario::run,
          () -> "the nemesis scenario ran past its time limit; seed " + seed + " (replay with "
              + scenario.report().replay() + ")");
    }
  }
}
