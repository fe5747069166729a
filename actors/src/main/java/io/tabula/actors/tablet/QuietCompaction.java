package io.tabula.actors.tablet;

import java.util.List;
import java.util.Map;

/**
 * When a tablet compacts its files into one per group: once it has taken no writes for
 * {@link #QUIET_TICKS} ticks and a group has more than one SSTable, once per quiet spell.
 * Merging compactions keep files of alike size apart to spare writes, so a row rewritten
 * over time lies in several files and a point read loads a block of each; once writes
 * pause, one pass puts every row in one file (and drops deleted and expired data). Not
 * thread-safe: the tablet actor's own.
 */
final class QuietCompaction {
  /** Ticks without writes before a tablet compacts. */
  static final int QUIET_TICKS = 2;

  private boolean wroteSinceTick;
  private int quietTicks;
  private boolean compactedThisSpell;

  void wrote() {
    wroteSinceTick = true;
  }

  /** At a tick, with the tablet's files by group: whether to start its major compaction now. */
  boolean dueAtTick(Map<String, List<String>> files) {
    if (wroteSinceTick) {
      wroteSinceTick = false;
      quietTicks = 0;
      compactedThisSpell = false;
      return false;
    }
    if (++quietTicks >= QUIET_TICKS && !compactedThisSpell && files.values().stream().anyMatch(l -> l.size() > 1)) {
      compactedThisSpell = true;
      return true;
    }
    return false;
  }
}
