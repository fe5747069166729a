package io.tabula.persistence.tablet;

import io.tabula.persistence.changes.Change;
import io.tabula.persistence.changes.ChangeLog;
import io.tabula.persistence.memtable.Memtable;
import io.tabula.persistence.model.RowMutation;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;

/**
 * A tablet's part of its table's change stream (docs/change-streams.md): while the schema
 * keeps changes, each write is also added to its memtable as a {@link Change}, with its
 * commit time; a flush writes the memtable's changes as a segment of the tablet's {@link
 * ChangeLog} before the manifest commit that moves the redo point past them. A crash loses
 * no change: what the memtable held is replayed from the commit log with the server time the
 * log recorded, and flushed again.
 *
 * <p>Readers ask {@link #read} for the changes after a sequence: what the memtables hold, and
 * whether that is every change after it ({@link InMemory#complete}); when it is not, the rest
 * is in the segments, which any node reads from the storage.
 *
 * <p>Thread-safe: {@link #segmentsThrough} is written by the one flush that runs at a time
 * (under the flushes' lock) and read by any thread.
 */
public final class TabletChangeLog {
  private final Tablet tablet;
  private final String folder;
  /**
   * Every change at or below it that the tablet keeps is in a segment: the redo point it
   * opened with (every write at or below it was flushed), raised by each segment written.
   * Raised before the flushed memtable leaves the tablet's version.
   */
  private volatile long segmentsThrough;
  private final ServerTimes serverTimes;
  /** The newest commit time recorded; written by the thread applying writes (one at a time). */
  private volatile long lastCommit;
  private volatile boolean disorderReported;

  TabletChangeLog(Tablet tablet, long redoPoint, ServerTimes serverTimes) {
    this.tablet = tablet;
    this.serverTimes = serverTimes;
    this.folder = ChangeLog.folder(tablet.dir);
    this.segmentsThrough = redoPoint;
  }

  /** Whether the tablet keeps its changes now. */
  boolean keeps() {
    return tablet.schema().changeRetentionMicros() > 0;
  }

  /**
   * Records a write's change in {@code m}, if the tablet keeps changes. Checks what the stream's
   * order rests on: a tablet's writes are applied one after another (by its actor), so commit
   * times never fall as sequences grow; a write that breaks it is reported once.
   */
  void written(Memtable m, long base, long commitMicros, RowMutation rm) {
    if (commitMicros < 0 || !keeps()) {
      return;
    }
    long before = lastCommit;
    if (commitMicros < before && !disorderReported) {
      disorderReported = true;
      tablet.env.failures().report("the change stream's order of tablet " + tablet.id(), new IllegalStateException(
          "a write at sequence " + base + " committed at " + commitMicros + " µs, before the write ahead of it ("
              + before + " µs): the tablet's writes were applied from more than one thread at once"));
    }
    lastCommit = Math.max(before, commitMicros);
    m.addChange(new Change(base, commitMicros, rm));
  }

  /**
   * Before the flush of {@code m} commits: its changes as a segment, durably, and the
   * segments past the retention deleted. Nothing while the tablet keeps no changes (a
   * memtable's changes from before the retention was turned off are dropped with the log).
   */
  void flushing(Memtable m) throws IOException {
    NavigableMap<Long, Change> changes = m.changes();
    if (changes.isEmpty() || !keeps()) {
      return;
    }
    ChangeLog.Segment s = ChangeLog.write(tablet.env.storage(), folder, changes.values());
    segmentsThrough = Math.max(segmentsThrough, s.last());
    expire();
  }

  /**
   * Completes once a write above {@code seq} is visible or the tablet closed, or after {@code
   * timeoutMillis} (asynchronous dependents only).
   */
  public java.util.concurrent.CompletableFuture<Void> visibleAfter(long seq, long timeoutMillis) {
    return tablet.sequence().visibleAfter(seq, timeoutMillis);
  }

  /** The folder of the tablet's change log. */
  public String folder() {
    return folder;
  }

  /** Deletes the segments whose changes are all older than the retention. */
  void expire() throws IOException {
    long retention = tablet.schema().changeRetentionMicros();
    if (retention > 0) {
      ChangeLog.deleteOlder(tablet.env.storage(), folder, tablet.env.clock().nowMicros() - retention);
    }
  }

  /** After a schema change: a table that keeps no changes any more drops its log. */
  void retentionChanged(long before, long after) {
    if (before > 0 && after == 0) {
      tablet.env.background().execute(() -> {
        try {
          ChangeLog.deleteAll(tablet.env.storage(), folder);
        } catch (IOException | RuntimeException e) {
          tablet.env.failures().report("dropping the change log of tablet " + tablet.id(), e);
        }
      });
    }
  }

  /**
   * At open: the tablet is served again, so a merge it was part of was given up (a merge that
   * went through never opens its parents again) and its marker goes.
   */
  void opened() throws IOException {
    if (keeps()) {
      ChangeLog.deleteMerged(tablet.env.storage(), folder);
    }
  }

  /**
   * What the memtables hold after a sequence, for a change stream's reader.
   *
   * @param changes the visible changes after it, in sequence order, about {@code maxBytes} at most (one at least)
   * @param complete whether these are every change after it up to the visible sequence; if
   *     not, the ones before them are in the segments
   * @param visible the visible sequence when read
   * @param watermarkMicros no change after these will have an earlier commit time; 0 if unknown
   */
  /**
   * The watermark of a tablet with no write in flight: a write's commit time is the highest
   * server time handed out once it has taken it ({@link ServerTimes}), and later ones are at
   * least the clock's. A write stamped but not yet given its sequence (on the actor applying
   * it) is at the highest server time: so is the watermark unless the clock is a second past
   * it. An estimate, as Cloud Bigtable's: a write stamped and stalled for over a second
   * before its insert would come in below it.
   */
  private long idleWatermark() {
    return Math.max(serverTimes.max(), tablet.env.clock().nowMicros() - IDLE_LAG_MICROS);
  }

  static final long IDLE_LAG_MICROS = 1_000_000;

  public record InMemory(List<Change> changes, boolean complete, long visible, long watermarkMicros) {}

  /** The changes after sequence {@code after} that the memtables hold, about {@code maxBytes} of them. */
  public InMemory read(long after, long maxBytes) {
    long visible = tablet.visibleSequence();
    TabletVersion v = tablet.acquire();
    try {
      // After the version: a memtable flushed before it was pinned raised this first.
      boolean complete = after >= segmentsThrough;
      List<Change> out = new ArrayList<>();
      long bytes = 0;
      List<Memtable> oldestFirst = new ArrayList<>();
      for (int i = v.frozen.size() - 1; i >= 0; i--) {
        oldestFirst.add(v.frozen.get(i).memtable());
      }
      oldestFirst.add(v.active);
      collect:
      for (Memtable m : oldestFirst) {
        for (Change c : m.changes().tailMap(after, false).values()) {
          if (c.lastSequence() > visible || (!out.isEmpty() && bytes + c.approximateBytes() > maxBytes)) {
            break collect;
          }
          out.add(c);
          bytes += c.approximateBytes();
        }
      }
      long last = out.isEmpty() ? after : out.get(out.size() - 1).lastSequence();
      long watermark = last == visible && tablet.nextSequenceSnapshot() - 1 == visible ? idleWatermark()
          : out.isEmpty() ? 0 : out.get(out.size() - 1).commitMicros();
      return new InMemory(out, complete, visible, watermark);
    } finally {
      v.release();
    }
  }
}
