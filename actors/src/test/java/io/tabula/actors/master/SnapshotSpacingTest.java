package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When the master snapshots ({@link SnapshotSpacing}): pure arithmetic over sequence numbers. */
class SnapshotSpacingTest {
  /** The events of 1..{@code to} after which it snapshots, for a directory of {@code tablets}. */
  private static List<Long> snapshots(int tablets, long to) {
    SnapshotSpacing s = new SnapshotSpacing();
    List<Long> at = new ArrayList<>();
    for (long n = 1; n <= to; n++) {
      if (n % SnapshotSpacing.MAX_EVENTS == 0) {
        continue; // Pekko's retention takes this one without asking
      }
      if (s.snapshotAt(n, tablets)) {
        at.add(n);
      }
    }
    return at;
  }

  @Test
  void aSmallDirectoryEvery200EventsButNoneJustBeforeARetentionPoint() {
    List<Long> at = snapshots(10, 10_000);
    assertEquals(List.of(200L, 400L, 600L, 800L, 1000L, 1200L, 1400L, 1600L, 1800L, 2000L, 2200L, 2400L, 2600L,
        2800L, 5200L, 5400L, 5600L, 5800L, 6000L, 6200L, 6400L, 6600L, 6800L, 7000L, 7200L, 7400L, 7600L, 7800L),
        at);
    // One journal write holds up to 2,001 events, and Pekko stops at the first that snapshots:
    // a snapshot of ours in that window before a retention point would take the retention's place.
    for (long n : at) {
      assertFalse(SnapshotSpacing.MAX_EVENTS - n % SnapshotSpacing.MAX_EVENTS <= SnapshotSpacing.BEFORE_RETENTION, "" + n);
    }
  }

  @Test
  void aLargeDirectoryInProportionAndAtMostTheRetentionsEvery() {
    assertEquals(List.of(2000L, 7000L), snapshots(100_000, 10_000));
    assertEquals(List.of(), snapshots(1_000_000, 10_000), "only the retention's, every 5,000");
  }

  @Test
  void afterARecoveryTheSpacingCountsFromIt() {
    SnapshotSpacing s = new SnapshotSpacing();
    s.recovered(5_100);
    assertFalse(s.snapshotAt(5_200, 10));
    assertEquals(true, s.snapshotAt(5_300, 10));
  }
}
