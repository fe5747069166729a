package io.tabula.actors.master;

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
 * {@code every}, one at a time, off the master's thread, over the tablets of the directory as
 * it is when the sweep starts. The master never waits for it.
 *
 * <p>Owned by the master's thread, except {@link #running}, which the sweep's completion
 * clears from an I/O thread.
 */
final class FileSweeps {
  private static final Logger LOG = LoggerFactory.getLogger(FileSweeps.class);
  private final MasterNodes nodes;
  private final Duration every;
  private final AtomicBoolean running = new AtomicBoolean();
  private long lastStart;

  FileSweeps(MasterNodes nodes, Duration every, long now) {
    this.nodes = nodes;
    this.every = every;
    this.lastStart = now;
  }

  /** At each tick: starts a sweep if {@code every} has passed since the last one began and none runs. */
  void onTick(Directory d, long now) {
    if (every.isZero() || now - lastStart < every.toNanos() || !running.compareAndSet(false, true)) {
      return;
    }
    lastStart = now;
    Map<String, Set<String>> tablets = new TreeMap<>();
    for (TabletInfo t : d.allTablets()) {
      tablets.computeIfAbsent(t.table(), k -> new TreeSet<>()).add(t.id());
    }
    nodes.sweepFiles(tablets).whenComplete((r, err) -> {
      running.set(false);
      if (err != null) {
        LOG.warn("the sweep of unreferenced SSTables failed; the next one tries again", err);
      } else if (r != null && !r.deleted().isEmpty()) {
        LOG.info("deleted {} SSTables no tablet references any more ({} unreferenced, {} referenced){}",
            r.deleted().size(), r.unmarked(), r.marked(),
            r.tablesSkipped().isEmpty() ? "" : "; tables not swept this time: " + r.tablesSkipped());
      }
    });
  }
}
