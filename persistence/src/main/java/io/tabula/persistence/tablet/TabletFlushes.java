package io.tabula.persistence.tablet;

import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.iterator.FilteringIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A tablet's minor compactions (paper §5.4): a full memtable is frozen (a new one takes
 * writes) and frozen memtables are flushed, oldest first, each to one SSTable per locality
 * group, on the node's background executor or a caller waiting for it; the files go into
 * the manifest through {@link TabletFiles#addFlushed}. Writers wait ({@link
 * #awaitFlushCapacity}) while too many frozen memtables wait for their flush, and hear of a
 * failing flush through {@link #lastError}.
 *
 * <p>One flush runs at a time per tablet, under {@link #flushLock}; it never waits for a
 * merging compaction ({@link TabletMerges}), which runs under its own lock.
 *
 * <p>Lock order (see {@link Tablet}): {@link #flushLock}, then the files' lock. The
 * {@link #capacity} monitor is taken alone (writers wait on it). Thread-safe.
 */
final class TabletFlushes {
  private final Tablet tablet;
  private final TabletEnv env;
  private final TabletFiles files;
  /** What runs after a flush round: a merge may be due. */
  private final Runnable afterFlush;
  /** Held by the one flush that runs at a time. */
  private final ReentrantLock flushLock = new ReentrantLock();
  private final AtomicBoolean scheduled = new AtomicBoolean();
  /** Writers waiting for a flush wait on it; flushes and closing notify it. */
  private final Object capacity = new Object();
  private volatile IOException lastError;

  TabletFlushes(Tablet tablet, TabletFiles files, Runnable afterFlush) {
    this.tablet = tablet;
    this.env = tablet.env;
    this.files = files;
    this.afterFlush = afterFlush;
  }

  /** The last background failure (a flush that hit a full disk, say), or null. */
  IOException lastError() {
    return lastError;
  }

  /** Closes the tablet's files to changes and wakes writers waiting for a flush. */
  void shutdown() {
    files.close();
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

  /** Whether this tablet has as many frozen memtables waiting for their flush as it may hold. */
  boolean flushBacklogFull() {
    return tablet.currentVersion().frozen.size() >= env.options().maxFrozenMemtables();
  }

  /**
   * Whether a write now would wait in {@link #awaitFlushCapacity} for a flush to finish: this
   * tablet's flush backlog is full, or the node's memtables hold their whole budget.
   */
  boolean mustWait() {
    return flushBacklogFull() || env.memtables().full();
  }

  /**
   * For the node's budget: freezes the active memtable (unless empty, or the tablet takes no
   * more writes: a closing tablet's memtable is its closer's business) and schedules the
   * flush; whether it froze.
   */
  boolean freezeAndSchedule() {
    if (!freeze(true, true)) {
      return false;
    }
    schedule();
    return true;
  }

  /** Schedules a flush if memtables wait frozen (one whose flush failed, say). */
  void retryFrozen() {
    if (!tablet.currentVersion().frozen.isEmpty()) {
      schedule();
    }
  }

  /** Throws what {@link #awaitFlushCapacity} would if the last flush failed. */
  void throwIfFlushesFail() {
    IOException e = lastError;
    if (e != null) {
      throw new TabletUnavailableException("tablet " + tablet.id() + " cannot flush its memtables: " + e.getMessage());
    }
  }

  /** Blocks a writer while too many frozen memtables wait for their flush, or the node's memtables hold their budget. */
  void awaitFlushCapacity() {
    // mustWait may run the budget's check, which takes tablets' locks: never under the monitor.
    while (mustWait() && !files.closed()) {
      IOException e = lastError;
      if (e != null) {
        throw new TabletUnavailableException("tablet " + tablet.id() + " cannot flush its memtables: "
            + e.getMessage());
      }
      schedule();
      synchronized (capacity) {
        try {
          // Bounded: a flush that ends between the check and this wait is seen on the next round.
          capacity.wait(100);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new TabletUnavailableException("interrupted while waiting for a flush of tablet " + tablet.id());
        }
      }
    }
  }

  private boolean freeze(boolean force) {
    return freeze(force, false);
  }

  /** {@code forBudget}: not once the tablet takes no more writes (checked under the version lock). */
  private boolean freeze(boolean force, boolean forBudget) {
    return tablet.changeVersion(v -> {
      // Closed: the version was released for good (a budget's freeze may come late).
      if (files.closed() || (forBudget && tablet.writesClosed()) || v.active.isEmpty()
          || (!force && v.active.approximateBytes() < env.options().memtableBytes())) {
        return null;
      }
      List<TabletVersion.Frozen> frozen = new ArrayList<>();
      frozen.add(new TabletVersion.Frozen(v.active, tablet.sequence().redoForFreeze(files.redoPoint()),
          tablet.nextSequenceSnapshot() - 1));
      frozen.addAll(v.frozen);
      return new TabletVersion(env.newMemtable(), frozen, v.files);
    });
  }

  private void schedule() {
    if (!files.closed() && scheduled.compareAndSet(false, true)) {
      env.background().execute(() -> {
        scheduled.set(false);
        runLogged("background work", () -> flushing(this::flushAll));
        afterFlush.run();
      });
    }
  }

  /**
   * Runs background work ({@code what}, for the message) whose failure only a later writer
   * hears of (through {@link #lastError}).
   */
  void runLogged(String what, Work w) {
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

  /** Flushes the frozen memtables (none is frozen now); completes when they are in SSTables. */
  CompletableFuture<Void> flushFrozen() {
    return background(() -> flushing(this::flushAll));
  }

  interface Work {
    void run() throws IOException;
  }

  private CompletableFuture<Void> background(Work w) {
    return background(env.background(), w);
  }

  /** Runs {@code w} on {@code on}; the future fails with what it threw. */
  static CompletableFuture<Void> background(Executor on, Work w) {
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
      // Memory went back: the node's writers may go on (and other memtables may be due).
      env.memtables().check();
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
    long start = System.nanoTime();
    try {
      boolean oneGroup = schema.groupNames().size() == 1;
      for (String g : schema.groupNames()) {
        CellIterator it = f.memtable().iterator();
        if (!oneGroup) {
          it = new FilteringIterator(it, new GroupMembership(schema, g));
        }
        it.seekToFirst();
        SSTableHandle h = SSTableFiles.write(env, files.newFilePath(), groupOrDefault(schema, g), schema, it, false);
        if (h != null) {
          written.put(g, h);
        }
      }
    } catch (IOException | RuntimeException e) {
      written.values().forEach(h -> h.discard(true));
      throw e;
    }
    try {
      tablet.changes().flushing(f.memtable());
    } catch (IOException | RuntimeException e) {
      written.values().forEach(h -> h.discard(true));
      throw e;
    }
    files.addFlushed(f, written);
    env.stats().record(EngineStats.Work.FLUSH, fileBytes(written.values()), System.nanoTime() - start);
    env.flushed().run();
  }

  /** The bytes of the files in {@code handles}. */
  static long fileBytes(Collection<SSTableHandle> handles) {
    long n = 0;
    for (SSTableHandle h : handles) {
      n += h.reader().info().fileBytes();
    }
    return n;
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

  static LocalityGroup groupOrDefault(TableSchema schema, String g) {
    LocalityGroup lg = schema.group(g);
    return lg != null ? lg : LocalityGroup.defaults(g);
  }
}
