package io.tabula.actors.tablet;

import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.tablet.Tablet;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What a serving tablet tells the master at each tick: its load since the last tick (reads,
 * writes, size; the balancer's input) every time, and its files and redo point when they
 * have changed since last told (the master's record of what the tablet needs from the shared
 * root and the logs). Owned by the tablet actor's thread.
 */
final class TabletReports {
  private final TabletInfo info;
  private final Tablet tablet;
  private final ActorRef<Master.Command> master;
  private Map<String, List<String>> reportedFiles = Map.of();
  private long reportedRedo = -1;
  /** When the tablet last reported its load (System.nanoTime). */
  private long lastNanos = System.nanoTime();
  /** The size last reported. */
  private long reportedSize = -1;
  /** Whether the last report was of a quiet tablet (see {@link #report}). */
  private boolean wasQuiet;
  /** Whether the last call found the tablet quiet. */
  private boolean quiet;

  TabletReports(TabletInfo info, Tablet tablet, ActorRef<Master.Command> master) {
    this.info = info;
    this.tablet = tablet;
    this.master = master;
  }

  /**
   * Reports the load (what {@code load} counted since the last report, the tablet's
   * {@code size}) and any change of files; answers the files now. A quiet tablet (nothing read
   * or written since the last call, the same size and files) reports its load once, so the
   * master's average falls to nothing, and then not again until it is busy: a node's idle
   * tablets cost the master nothing.
   */
  Map<String, List<String>> report(TabletLoad load, long size) {
    long now = System.nanoTime();
    TabletLoad.Taken t = load.take(now - lastNanos);
    Map<String, List<String>> files = tablet.files();
    long redo = tablet.redoPoint();
    quiet = t.rowsRead() == 0 && t.rowsWritten() == 0 && size == reportedSize && files.equals(reportedFiles)
        && redo == reportedRedo;
    if (!quiet || !wasQuiet) {
      master.tell(new Master.ReportLoad(info.id(), t.rowsRead(), t.rowsWritten(), size, now - lastNanos,
          t.bytesRead(), t.bytesWritten()));
      lastNanos = now;
    }
    wasQuiet = quiet;
    reportedSize = size;
    if (!files.equals(reportedFiles) || redo != reportedRedo) {
      master.tell(new Master.RecordFiles(info.table(), info.id(), files, redo));
      reportedFiles = files;
      reportedRedo = redo;
    }
    return files;
  }

  /** Whether the last {@link #report} found the tablet quiet. */
  boolean quiet() {
    return quiet;
  }
}
