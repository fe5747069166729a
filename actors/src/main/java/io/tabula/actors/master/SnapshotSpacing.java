package io.tabula.actors.master;

/**
 * When the master snapshots its directory (docs/formats/master-journal.md). A snapshot writes
 * the whole directory (70 MB and 1.5 s at a million tablets, {@code bench/run-directory}), so
 * one every 200 events made the master's work per event grow with the directory. Snapshots are
 * spaced in proportion to it instead, one event per {@value #TABLETS_PER_EVENT} tablets, within
 * [{@value #MIN_EVENTS}, {@value #MAX_EVENTS}] (none in the last {@link #BEFORE_RETENTION} events
 * before a retention point): up to 250,000 tablets a snapshot costs each event about what
 * writing 50 tablets does, and beyond, one in {@value #MAX_EVENTS} events writes them all (0.3 ms
 * per event at a million); a recovery replays at most {@value #MAX_EVENTS} events after the
 * newest snapshot. At every {@value #MAX_EVENTS}th event
 * Pekko's retention takes the snapshot itself and deletes the events more than
 * 2 × {@value #MAX_EVENTS} before it, so the journal holds at most about 15,000 live events; the
 * master's file journal keeps the two newest snapshots ({@code FileSnapshotStore}). Owned by
 * the master's thread.
 */
final class SnapshotSpacing {
  /** The fewest events between two snapshots. */
  static final int MIN_EVENTS = 200;
  /** The most events between two snapshots, and how often the retention's snapshot comes. */
  static final int MAX_EVENTS = 5_000;
  /** Tablets per event between two snapshots. */
  static final int TABLETS_PER_EVENT = 50;
  /**
   * More than the most events one journal write of the master holds (a batch of
   * {@link TabletOpenings#BATCH} reports: opens, the moves they finish, and closes). Pekko asks
   * the events of one write in turn and stops at the first that takes a snapshot, so a snapshot
   * of this class's within that many events before a multiple of {@value #MAX_EVENTS} could
   * take the place of the retention's, and no event would be deleted that round: none is
   * taken there.
   */
  static final int BEFORE_RETENTION = 2 * TabletOpenings.BATCH + 1;

  /** The sequence number of the last snapshot (or of the recovery). */
  private long last;

  /** How many events go between two snapshots of a directory of {@code tablets} tablets. */
  static long every(int tablets) {
    return Math.min(MAX_EVENTS, Math.max(MIN_EVENTS, tablets / TABLETS_PER_EVENT));
  }

  /** The journal was recovered up to {@code sequenceNr}. */
  void recovered(long sequenceNr) {
    last = sequenceNr;
  }

  /**
   * Whether to snapshot after event {@code sequenceNr} of a directory of {@code tablets}
   * tablets. Pekko takes the retention's snapshots (every {@value #MAX_EVENTS}) without asking.
   */
  boolean snapshotAt(long sequenceNr, int tablets) {
    long since = Math.max(last, sequenceNr - sequenceNr % MAX_EVENTS);
    if (sequenceNr - since < every(tablets) || MAX_EVENTS - sequenceNr % MAX_EVENTS <= BEFORE_RETENTION) {
      return false;
    }
    last = sequenceNr;
    return true;
  }
}
