package io.tabula.actors.tablet;

import java.time.Duration;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * How often a tablet's periodic check runs: every check interval while the tablet is busy,
 * doubled after every {@value #QUIET_TICKS} quiet checks in a row up to {@value #MAX_STRETCH}
 * intervals, and back to one at its next write or busy check. A node's idle tablets then cost
 * it a timer message every minute or so each, not every two seconds. Owned by the tablet
 * actor's thread.
 */
final class TickStretch {
  static final int QUIET_TICKS = 3;
  static final int MAX_STRETCH = 32;

  private final TimerScheduler<TabletActor.Command> timers;
  private final Duration interval;
  /** How many check intervals apart the ticks are now. */
  private int stretch = 1;
  /** Quiet ticks in a row at the current stretch. */
  private int quietTicks;

  TickStretch(TimerScheduler<TabletActor.Command> timers, Duration interval) {
    this.timers = timers;
    this.interval = interval;
  }

  /** A write came, or a check found the tablet busy: ticks at the check interval again. */
  void busy() {
    quietTicks = 0;
    if (stretch != 1) {
      stretch = 1;
      timers.startTimerWithFixedDelay(TabletActor.Tick.INSTANCE, interval);
    }
  }

  /**
   * After a check: stretches the ticks of a tablet that stays quiet with an empty memtable
   * (one holding writes keeps its ticks until {@link QuietCompaction} has flushed it).
   */
  void checked(boolean quiet, boolean memtableEmpty) {
    if (!quiet || !memtableEmpty) {
      busy();
      return;
    }
    if (++quietTicks >= QUIET_TICKS && stretch < MAX_STRETCH) {
      quietTicks = 0;
      stretch *= 2;
      timers.startTimerWithFixedDelay(TabletActor.Tick.INSTANCE, interval.multipliedBy(stretch));
    }
  }
}
