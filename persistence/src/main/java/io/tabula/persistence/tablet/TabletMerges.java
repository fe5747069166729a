package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.iterator.MergingIterator;
import io.tabula.persistence.iterator.RangeIterator;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.SSTableInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A tablet's merging compactions (paper §5.4): when a group has too many SSTables, a run of
 * them ({@link CompactionPicker}) is merged into one, on the node's merge executor; a major
 * compaction when the run is all of them. The output takes the inputs' place through
 * {@link TabletFiles#replaceMerged}.
 *
 * <p>One merge runs at a time per tablet, under {@link #mergeLock}; a flush never waits for
 * it (writers wait for flushes, and a merge takes seconds). Merges can be held (a tablet
 * about to split or close must not have its files replaced under it): holding waits for the
 * running merge to end, and none starts while a hold lasts.
 *
 * <p>Lock order (see {@link Tablet}): {@link #mergeLock}, then the files' lock. Never taken
 * together with the flush lock. Thread-safe.
 */
final class TabletMerges {
  private final Tablet tablet;
  private final TabletEnv env;
  private final TabletFiles files;
  private final TabletFlushes flushes;
  /** Held by the one merging compaction that runs at a time. */
  private final ReentrantLock mergeLock = new ReentrantLock();
  private final AtomicBoolean scheduled = new AtomicBoolean();
  /** The holds in place ({@link #hold}): no merge starts while there is one. */
  private final AtomicInteger holds = new AtomicInteger();

  TabletMerges(Tablet tablet, TabletFiles files, TabletFlushes flushes) {
    this.tablet = tablet;
    this.env = tablet.env;
    this.files = files;
    this.flushes = flushes;
  }

  /**
   * Starts a merging compaction on the merge executor if one may be needed and none is
   * waiting to start. A merge that finds another running leaves it to that one, which looks
   * again when it ends.
   */
  void schedule() {
    if (!files.closed() && !held() && scheduled.compareAndSet(false, true)) {
      env.merges().execute(() -> {
        scheduled.set(false);
        if (!mergeLock.tryLock()) {
          return;
        }
        boolean[] merged = {false};
        try {
          flushes.runLogged("merging compaction", () -> merged[0] = mergeIfNeeded());
        } finally {
          mergeLock.unlock();
        }
        if (merged[0]) {
          schedule();
        }
      });
    }
  }

  /** Merges every group's files into one on the merge executor (skipped while merges are held). */
  CompletableFuture<Void> mergeAll() {
    return TabletFlushes.background(env.merges(), () -> {
      mergeLock.lock();
      try {
        for (String g : new ArrayList<>(tablet.currentVersion().files.keySet())) {
          int n = tablet.currentVersion().files(g).size();
          if (n > 0 && !held() && !files.closed()) {
            compact(g, 0, n);
          }
        }
      } finally {
        mergeLock.unlock();
      }
    });
  }

  /**
   * Holds merging compactions and waits for a running one to end (a tablet about to split or
   * close must not have its files replaced under it), or releases one hold. Holds are counted:
   * merges resume once each hold was released, so one holder's release never ends another's
   * hold (a split asked for by a caller that holds merges already).
   */
  void hold(boolean hold) {
    if (hold) {
      holds.incrementAndGet(); // before the lock: a merge that takes it after this sees the hold
      mergeLock.lock();
      mergeLock.unlock();
    } else if (holds.updateAndGet(n -> Math.max(0, n - 1)) == 0) {
      schedule();
    }
  }

  private boolean held() {
    return holds.get() > 0;
  }

  /** Merges one run of files of each group that has too many; whether it merged any. */
  private boolean mergeIfNeeded() throws IOException {
    boolean merged = false;
    int max = env.options().maxFilesPerGroup();
    for (String g : new ArrayList<>(tablet.currentVersion().files.keySet())) {
      if (held() || files.closed()) {
        return merged;
      }
      List<SSTableHandle> fs = tablet.currentVersion().files(g);
      long[] sizes = new long[fs.size()];
      byte[][] firstRows = new byte[sizes.length][];
      byte[][] lastRows = new byte[sizes.length][];
      for (int i = 0; i < sizes.length; i++) {
        SSTableInfo info = fs.get(i).reader().info();
        sizes[i] = bytesInRange(fs.get(i));
        firstRows[i] = firstRowWithin(info);
        lastRows[i] = lastRowWithin(info);
      }
      CompactionPicker.Run run = CompactionPicker.pick(sizes, firstRows, lastRows, max);
      if (run != null) {
        compact(g, run.from(), run.to());
        merged = true;
      }
    }
    return merged;
  }

  /** A file's first row, or this tablet's first if the file (shared with a split sibling) starts before it. */
  private byte[] firstRowWithin(SSTableInfo info) {
    byte[] start = tablet.startRow();
    return ByteArrays.compare(info.firstRow(), start) >= 0 ? info.firstRow() : start;
  }

  /**
   * A file's last row, or this tablet's end row if the file reaches it. The end is
   * exclusive, but it sorts after every row the tablet holds: still right for telling
   * which files share a row.
   */
  private byte[] lastRowWithin(SSTableInfo info) {
    byte[] end = tablet.endRow();
    return end.length == 0 || ByteArrays.compare(info.lastRow(), end) < 0 ? info.lastRow() : end;
  }

  /** A file's data bytes within this tablet's rows (a file shared with a split sibling counts its part). */
  private long bytesInRange(SSTableHandle h) {
    long[] bytes = {0};
    h.reader().forEachBlockSample((row, blockBytes) -> {
      if (tablet.containsRow(row)) {
        bytes[0] += blockBytes;
      }
    });
    return bytes[0];
  }

  /**
   * Merging compaction of the SSTables {@code [from, to)} (newest first) of group {@code g}
   * into one, which takes their place; a major compaction (tombstones dropped) when that is
   * all of them. Flushes may add newer files meanwhile; the output still takes the inputs'
   * place, which stays contiguous as flushes only add files in front.
   */
  private void compact(String g, int from, int to) throws IOException {
    TabletVersion v = tablet.currentVersion();
    List<SSTableHandle> all = v.files(g);
    List<SSTableHandle> inputs = List.copyOf(all.subList(from, to));
    boolean major = from == 0 && to == all.size();
    TableSchema schema = tablet.schema();
    List<CellIterator> its = new ArrayList<>();
    inputs.forEach(h -> its.add(h.reader().iterator()));
    SSTableHandle out;
    long start = System.nanoTime();
    try (CellIterator it = new RangeIterator(new MergingIterator(its), tablet.startRow(), tablet.endRow())) {
      it.seekToFirst();
      out = SSTableFiles.write(env, files.newFilePath(), TabletFlushes.groupOrDefault(schema, g), schema, it, major);
    }
    files.replaceMerged(g, inputs, out);
    env.stats().record(major ? EngineStats.Work.MAJOR_COMPACTION : EngineStats.Work.MERGE,
        out == null ? 0 : TabletFlushes.fileBytes(List.of(out)), System.nanoTime() - start);
  }
}
