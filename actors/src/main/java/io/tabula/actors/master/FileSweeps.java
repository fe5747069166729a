package io.tabula.actors.master;

import io.tabula.persistence.tablet.FileSweeper;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the master's mark-and-sweep of SSTables ({@link MasterNodes#sweepFiles}) every
 * {@code every}, one at a time, off the master's thread. The sweep marks by the directory as it
 * is when the sweep starts and marks again, before it deletes, by the directory as of the
 * master's latest tick. The master never waits for it.
 *
 * <p>The sweeps' marks ({@link FileSweeper.Marks}) are this master's: made with it and never
 * handed on, so a new master, on this node or another, starts the grace afresh. Time comes in
 * with each tick ({@code now}, a monotonic clock's nanos); this class reads no clock.
 *
 * <p>Owned by the master's thread, except {@link #running}, which the sweep's completion
 * clears from an I/O thread, and {@link #latest}, which a running sweep reads from its own.
 */
final class FileSweeps {
  private static final Logger LOG = LoggerFactory.getLogger(FileSweeps.class);
  private final MasterNodes nodes;
  private final Duration every;
  private final AtomicBoolean running = new AtomicBoolean();
  private final FileSweeper.Marks marks = new FileSweeper.Marks();
  /** The directory at the latest tick (immutable), for a running sweep to mark again by. */
  private volatile Directory latest;
  private long lastStart;

  FileSweeps(MasterNodes nodes, Duration every, long now) {
    this.nodes = nodes;
    this.every = every;
    this.lastStart = now;
  }

  /** At each tick: starts a sweep if {@code every} has passed since the last one began and none runs. */
  void onTick(Directory d, long now) {
    latest = d;
    if (every.isZero() || now - lastStart < every.toNanos() || !running.compareAndSet(false, true)) {
      return;
    }
    lastStart = now;
    nodes.sweepFiles(marks, () -> tablets(latest)).whenComplete((r, err) -> {
      running.set(false);
      if (err != null) {
        LOG.warn("the sweep of unreferenced SSTables failed; the next one tries again", err);
      } else if (r != null) {
        report(r);
      }
    });
  }

  private static void report(FileSweeper.Result r) {
    if (!r.deleted().isEmpty()) {
      LOG.info("deleted {} SSTables no tablet references any more ({} unreferenced, {} referenced){}",
          r.deleted().size(), r.unmarked(), r.marked(),
          r.tablesSkipped().isEmpty() ? "" : "; tables not swept this time: " + r.tablesSkipped());
    }
    switch (r.outcome()) {
      case FINISHED -> { }
      case NOT_MASTER -> LOG.info("the sweep of unreferenced SSTables stopped: this node is not the master any more");
      case TOO_SLOW -> LOG.warn("the sweep of unreferenced SSTables ran longer than a quarter of "
          + "tabula.master.sweep-files-grace and stopped before deleting, its marks too old; the next one tries again");
    }
  }

  /** Each table of {@code d} to its tablets' ids. */
  private static Map<String, Set<String>> tablets(Directory d) {
    Map<String, Set<String>> tablets = new TreeMap<>();
    for (TabletInfo t : d.allTablets()) {
      tablets.computeIfAbsent(t.table(), k -> new TreeSet<>()).add(t.id());
    }
    return tablets;
  }
}
