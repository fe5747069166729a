package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.iterator.FilteringIterator;
import io.tabula.persistence.iterator.MergingIterator;
import io.tabula.persistence.iterator.RangeIterator;
import io.tabula.persistence.memtable.Memtable;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.SSTableInfo;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A tablet's compactions (paper §5.4) and manifest: freezing a full memtable, flushing
 * frozen memtables to SSTables (minor), merging a run of a group's SSTables when there are
 * too many (merging, see {@link CompactionPicker}; major when the merge takes them all), and recording splits.
 *
 * <p>Invariants: (1) one flush and one merging compaction at a time per tablet, each
 * under its own lock, on the node's background executor or a caller waiting for it; a
 * flush does not wait for a merge (writers wait for flushes when memtables pile up, and a
 * merge takes seconds); (2) every change of files or redo point is committed under {@code
 * lock}, from the manifest and version current then: a flush puts its file first, a merge
 * puts its output where its inputs were; (3) a new manifest is durable before the version
 * that shows its files is installed, and files are deleted only after both; (4) the redo
 * point only grows.
 */
final class TabletMaintenance {
  private final Tablet tablet;
  private final TabletEnv env;
  /** Held while a manifest is committed and its version installed (short). */
  private final ReentrantLock lock = new ReentrantLock();
  /** Held by the one flush that runs at a time. */
  private final ReentrantLock flushLock = new ReentrantLock();
  /** Held by the one merging compaction that runs at a time. */
  private final ReentrantLock mergeLock = new ReentrantLock();
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private final AtomicBoolean mergeScheduled = new AtomicBoolean();
  private final Object capacity = new Object();
  private TabletManifest manifest;
  private final AtomicLong nextFileNumber;
  private volatile long redoPoint;
  private volatile IOException lastError;
  private volatile boolean shutdown;
  private volatile boolean mergesHeld;

  TabletMaintenance(Tablet tablet, TabletManifest manifest) {
    this.tablet = tablet;
    this.env = tablet.env;
    this.manifest = manifest;
    this.nextFileNumber = new AtomicLong(manifest.nextFileNumber());
    this.redoPoint = manifest.redoPoint();
  }

  long redoPoint() {
    return redoPoint;
  }

  /** The last background failure (a flush that hit a full disk, say), or null. */
  IOException lastError() {
    return lastError;
  }

  void shutdown() {
    shutdown = true;
    synchronized (capacity) {
      capacity.notifyAll();
    }
  }

  /** Freezes the memtable if it is full, and schedules its flush. */
  void maybeFreeze() {
    if (tablet.currentVersion().active.approximateBytes() >= env.options().memtableBytes() && freeze(false)) {
      schedule();
    }
  }

  /** Whether a write now would wait in {@link #awaitFlushCapacity} for a flush to finish. */
  boolean flushBacklogFull() {
    return tablet.currentVersion().frozen.size() >= env.options().maxFrozenMemtables();
  }

  /** Throws what {@link #awaitFlushCapacity} would if the last flush failed. */
  void throwIfFlushesFail() {
    IOException e = lastError;
    if (e != null) {
      throw new TabletUnavailableException("tablet " + tablet.id() + " cannot flush its memtables: " + e.getMessage());
    }
  }

  /** Blocks a writer while too many frozen memtables wait for their flush. */
  void awaitFlushCapacity() {
    int max = env.options().maxFrozenMemtables();
    if (tablet.currentVersion().frozen.size() < max) {
      return;
    }
    synchronized (capacity) {
      while (tablet.currentVersion().frozen.size() >= max && !shutdown) {
        IOException e = lastError;
        if (e != null) {
          throw new TabletUnavailableException("tablet " + tablet.id() + " cannot flush its memtables: "
              + e.getMessage());
        }
        schedule();
        try {
          capacity.wait(100);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new TabletUnavailableException("interrupted while waiting for a flush of tablet " + tablet.id());
        }
      }
    }
  }

  private boolean freeze(boolean force) {
    tablet.memLock.writeLock().lock();
    try {
      TabletVersion v = tablet.currentVersion();
      if (v.active.isEmpty() || (!force && v.active.approximateBytes() < env.options().memtableBytes())) {
        return false;
      }
      List<TabletVersion.Frozen> frozen = new ArrayList<>();
      frozen.add(new TabletVersion.Frozen(v.active, tablet.visibleSequence(), tablet.nextSequenceSnapshot() - 1));
      frozen.addAll(v.frozen);
      tablet.install(new TabletVersion(new Memtable(), frozen, v.files));
      return true;
    } finally {
      tablet.memLock.writeLock().unlock();
    }
  }

  private void schedule() {
    if (!shutdown && scheduled.compareAndSet(false, true)) {
      env.background().execute(() -> {
        scheduled.set(false);
        runLogged("background work", () -> flushing(this::flushAll));
        scheduleMerge();
      });
    }
  }

  /**
   * Starts a merging compaction on the merge executor if one may be needed and none is
   * waiting to start. A merge that finds another running leaves it to that one, which looks
   * again when it ends.
   */
  private void scheduleMerge() {
    if (!shutdown && !mergesHeld && mergeScheduled.compareAndSet(false, true)) {
      env.merges().execute(() -> {
        mergeScheduled.set(false);
        if (!mergeLock.tryLock()) {
          return;
        }
        boolean[] merged = {false};
        try {
          runLogged("merging compaction", () -> merged[0] = mergeIfNeeded());
        } finally {
          mergeLock.unlock();
        }
        if (merged[0]) {
          scheduleMerge();
        }
      });
    }
  }

  /**
   * Runs background work ({@code what}, for the message) whose failure only a later writer
   * hears of (through {@link #lastError}).
   */
  private void runLogged(String what, Work w) {
    try {
      w.run();
    } catch (IOException e) {
      lastError = e;
      env.failures().report(what + " of tablet " + tablet.id(), e);
    } catch (RuntimeException e) {
      lastError = new IOException(what + " of tablet " + tablet.id() + " failed", e);
      env.failures().report(what + " of tablet " + tablet.id(), e);
    }
  }

  CompletableFuture<Void> freezeAndFlush() {
    freeze(true);
    return background(() -> flushing(this::flushAll));
  }

  /** Flushes, then merges every group's files into one on the merge executor (skipped while merges are held). */
  CompletableFuture<Void> majorCompact() {
    return background(env.background(), () -> flushing(this::flushAll))
        .thenCompose(x -> background(env.merges(), () -> {
          mergeLock.lock();
          try {
            for (String g : new ArrayList<>(tablet.currentVersion().files.keySet())) {
              int n = tablet.currentVersion().files(g).size();
              if (n > 0 && !mergesHeld && !shutdown) {
                compact(g, 0, n);
              }
            }
          } finally {
            mergeLock.unlock();
          }
        }));
  }

  /**
   * Holds or resumes merging compactions, and when holding, waits for a running one to end:
   * a tablet about to split or close must not have its files replaced under it.
   */
  void holdMerges(boolean hold) {
    mergesHeld = hold;
    if (hold) {
      mergeLock.lock();
      mergeLock.unlock();
    } else {
      scheduleMerge();
    }
  }

  private interface Work {
    void run() throws IOException;
  }

  private CompletableFuture<Void> background(Work w) {
    return background(env.background(), w);
  }

  private CompletableFuture<Void> background(Executor on, Work w) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    on.execute(() -> {
      try {
        w.run();
        f.complete(null);
      } catch (IOException | RuntimeException e) {
        f.completeExceptionally(e);
      }
    });
    return f;
  }

  /** Runs flush work {@code w} under the flush lock; records its outcome for writers and wakes those waiting for a flush. */
  private void flushing(Work w) throws IOException {
    flushLock.lock();
    try {
      w.run();
      lastError = null;
    } catch (IOException e) {
      lastError = e;
      throw e;
    } finally {
      flushLock.unlock();
      synchronized (capacity) {
        capacity.notifyAll();
      }
    }
  }

  /** Waits for a maintenance future, turning its failure back into the IOException it was. */
  static void join(CompletableFuture<Void> f) throws IOException {
    try {
      f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for a flush or compaction", e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause() instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : e.getCause();
      if (c instanceof IOException io) {
        throw io;
      }
      if (c instanceof UncheckedIOException u) {
        throw u.getCause();
      }
      if (c instanceof RuntimeException r) {
        throw r;
      }
      throw new IOException(c);
    }
  }

  private String newFilePath() {
    return Storage.path(tablet.dir, String.format("%06d.sst", nextFileNumber.getAndIncrement()));
  }

  private void flushAll() throws IOException {
    while (!tablet.currentVersion().frozen.isEmpty()) {
      flushOldest();
    }
  }

  /** Minor compaction: the oldest frozen memtable becomes one SSTable per locality group. */
  private void flushOldest() throws IOException {
    TabletVersion v = tablet.currentVersion();
    TabletVersion.Frozen f = v.frozen.get(v.frozen.size() - 1);
    tablet.awaitFinished(f.maxAssigned());
    TableSchema schema = tablet.schema();
    Map<String, SSTableHandle> written = new HashMap<>();
    boolean committed = false;
    try {
      boolean oneGroup = schema.groupNames().size() == 1;
      for (String g : schema.groupNames()) {
        CellIterator it = f.memtable().iterator();
        if (!oneGroup) {
          it = new FilteringIterator(it, new GroupMembership(schema, g));
        }
        it.seekToFirst();
        SSTableHandle h = SSTableFiles.write(env, newFilePath(), groupOrDefault(schema, g), schema, it, false);
        if (h != null) {
          written.put(g, h);
        }
      }
      lock.lock();
      try {
        Map<String, List<TabletManifest.FileRef>> groups = new LinkedHashMap<>();
        for (String g : union(manifest.groups().keySet(), written.keySet())) {
          List<TabletManifest.FileRef> refs = new ArrayList<>();
          if (written.containsKey(g)) {
            refs.add(new TabletManifest.FileRef(written.get(g).path(), true));
          }
          refs.addAll(manifest.files(g));
          groups.put(g, refs);
        }
        commit(manifest.withFiles(groups, Math.max(redoPoint, f.redoPoint()), tablet.nextSequenceSnapshot() - 1,
            nextFileNumber.get()));
        committed = true;
        tablet.memLock.writeLock().lock();
        try {
          TabletVersion cur = tablet.currentVersion();
          List<TabletVersion.Frozen> frozen = new ArrayList<>(cur.frozen);
          frozen.remove(f);
          Map<String, List<SSTableHandle>> files = new HashMap<>(cur.files);
          written.forEach((g, h) -> {
            List<SSTableHandle> l = new ArrayList<>();
            l.add(h);
            l.addAll(cur.files(g));
            files.put(g, l);
          });
          tablet.install(new TabletVersion(cur.active, frozen, files));
        } finally {
          tablet.memLock.writeLock().unlock();
        }
        redoPoint = Math.max(redoPoint, f.redoPoint());
      } finally {
        lock.unlock();
      }
    } catch (IOException | RuntimeException e) {
      if (!committed) {
        written.values().forEach(h -> h.discard(true));
      }
      throw e;
    }
    env.flushed().run();
  }

  /** Merges one run of files of each group that has too many; whether it merged any. */
  private boolean mergeIfNeeded() throws IOException {
    boolean merged = false;
    int max = env.options().maxFilesPerGroup();
    for (String g : new ArrayList<>(tablet.currentVersion().files.keySet())) {
      if (mergesHeld || shutdown) {
        return merged;
      }
      List<SSTableHandle> files = tablet.currentVersion().files(g);
      long[] sizes = new long[files.size()];
      byte[][] firstRows = new byte[sizes.length][];
      byte[][] lastRows = new byte[sizes.length][];
      for (int i = 0; i < sizes.length; i++) {
        SSTableInfo info = files.get(i).reader().info();
        sizes[i] = bytesInRange(files.get(i));
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
    try (CellIterator it = new RangeIterator(new MergingIterator(its), tablet.startRow(), tablet.endRow())) {
      it.seekToFirst();
      out = SSTableFiles.write(env, newFilePath(), groupOrDefault(schema, g), schema, it, major);
    }
    lock.lock();
    try {
      if (shutdown) {
        throw new IOException("tablet " + tablet.id() + " closed during a merging compaction");
      }
      try {
        List<TabletManifest.FileRef> refs = manifest.files(g);
        int at = indexOfPath(refs, inputs.get(0).path());
        Map<String, List<TabletManifest.FileRef>> groups = new LinkedHashMap<>(manifest.groups());
        groups.put(g, replaced(refs, at, at + inputs.size(), out == null ? null
            : new TabletManifest.FileRef(out.path(), true)));
        commit(manifest.withFiles(groups, redoPoint, tablet.nextSequenceSnapshot() - 1, nextFileNumber.get()));
      } catch (IOException | RuntimeException e) {
        if (out != null) {
          out.discard(true);
        }
        throw e;
      }
      tablet.memLock.writeLock().lock();
      try {
        TabletVersion cur = tablet.currentVersion();
        List<SSTableHandle> now = cur.files(g);
        int at = now.indexOf(inputs.get(0));
        Map<String, List<SSTableHandle>> files = new HashMap<>(cur.files);
        files.put(g, replaced(now, at, at + inputs.size(), out));
        inputs.forEach(SSTableHandle::markObsolete);
        tablet.install(new TabletVersion(cur.active, cur.frozen, files));
      } finally {
        tablet.memLock.writeLock().unlock();
      }
    } finally {
      lock.unlock();
    }
  }

  private static int indexOfPath(List<TabletManifest.FileRef> refs, String path) {
    for (int i = 0; i < refs.size(); i++) {
      if (refs.get(i).path().equals(path)) {
        return i;
      }
    }
    throw new IllegalStateException("merge input " + path + " is no longer in the manifest");
  }

  /** {@code list} with {@code [from, to)} replaced by {@code merged} (left out if null: the merge kept nothing). */
  private static <T> List<T> replaced(List<T> list, int from, int to, T merged) {
    List<T> l = new ArrayList<>(list.subList(0, from));
    if (merged != null) {
      l.add(merged);
    }
    l.addAll(list.subList(to, list.size()));
    return l;
  }

  /** Whether an entry belongs in a group's SSTable: row deletes go to every group. Remembers the last family. */
  private static final class GroupMembership implements Predicate<CellKey> {
    private final TableSchema schema;
    private final String group;
    private byte[] lastFamily;
    private boolean lastAnswer;

    GroupMembership(TableSchema schema, String group) {
      this.schema = schema;
      this.group = group;
    }

    @Override
    public boolean test(CellKey k) {
      if (k.kind() == CellKind.DELETE_ROW) {
        return true;
      }
      if (lastFamily == null || !Arrays.equals(lastFamily, k.family())) {
        lastFamily = k.family();
        lastAnswer = schema.groupOf(new String(k.family(), StandardCharsets.UTF_8)).equals(group);
      }
      return lastAnswer;
    }
  }

  private static LocalityGroup groupOrDefault(TableSchema schema, String g) {
    LocalityGroup lg = schema.group(g);
    return lg != null ? lg : LocalityGroup.defaults(g);
  }

  private static List<String> union(Collection<String> a, Collection<String> b) {
    TreeSet<String> s = new TreeSet<>(a);
    s.addAll(b);
    return new ArrayList<>(s);
  }

  private void commit(TabletManifest next) throws IOException {
    ManifestCodec.write(env.storage(), tablet.dir, next);
    manifest = next;
  }

  /** Records the split in this tablet's manifest (the commit point), then writes the children's. */
  List<TabletManifest> recordSplit(TabletManifest.SplitInfo info, long lastSequence) throws IOException {
    lock.lock();
    try {
      TabletManifest parent = manifest.withFiles(manifest.groups(), redoPoint, lastSequence, nextFileNumber.get())
          .asSplit(info);
      commit(parent);
      List<TabletManifest> children = parent.children();
      for (TabletManifest c : children) {
        ManifestCodec.write(env.storage(), Tablet.dirOf(c.table(), c.tabletId()), c);
      }
      return children;
    } finally {
      lock.unlock();
    }
  }
}
