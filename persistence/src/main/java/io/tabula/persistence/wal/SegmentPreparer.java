package io.tabula.persistence.wal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.Closeable;
import java.io.IOException;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Makes the commit log's next segment before the writer needs it: its header and then zeros
 * up to the segment size, synced, and only then given its segment name. The writer then
 * writes its batches over the zeros.
 *
 * <p>Why: appending to a file changes its size and allocates blocks, so each fdatasync of an
 * appended log also commits the file system's journal. Writing over blocks that already hold
 * synced zeros changes no metadata: fdatasync then writes the log's own pages and flushes the
 * disk's cache, nothing more. On this project's test machine (ext4 on a virtual disk) that cut
 * a lone durable write's p50 from 0.34-0.45 ms to 0.27-0.30 ms ({@code bench/run-sync-entanglement},
 * its "alone" column). It did not shorten the long waits while a flush syncs a large SSTable
 * (about 100-140 ms): those are the disk's queue, which the log's write joins behind the
 * SSTable's, not the journal.
 *
 * <p>The zeros after the last batch are the segment's <em>zero tail</em>, which replay reads as
 * the end of the segment (docs/formats/commitlog.md). A segment that has only its header and
 * zeros is <em>blank</em>: one made and never written, which replay skips.
 *
 * <p>Numbers: the preparer hands out segment numbers, to itself and to the writer (for a plain
 * segment when none is ready), in increasing order, and the writer's segments only ever go up:
 * the writer gets its next segment in one step ({@link #next}), which gives it the ready
 * segment if there is one and a number above it otherwise. A segment prepared after the writer
 * went on to a higher number is stale, and is never handed out.
 *
 * <p>Pace: the zeros cost the disk as much as the log's own bytes, and their syncs join the
 * log's in the disk's queue. So while the log writes more than {@value #BUSY_BYTES_PER_SECOND}
 * bytes a second, the preparer pauses between its chunks, and the writer goes on with plain
 * segments: under a heavy load the log appends (as a plain log does; in the engine bench, durable
 * writes over prepared segments made 0.84 to 1.00 of a plain log's throughput), and a lightly loaded log,
 * whose writes wait for their syncs alone, gets prepared ones.
 *
 * <p>A segment, once named as one, is never deleted here: a stale one, and one ready but not
 * taken at close, are blank, and go to {@code leftBlank}, for the log to delete with the other
 * segments nobody needs (or for a later life of the folder to). Only its own half-made
 * {@code .prep} files, which no reader takes for segments, are deleted here. So after a fence
 * the preparer removes nothing a recovery may have listed. It makes files only in the log's
 * folder as it is ({@link Storage#createNewInFolder}, a rename within the folder), never the
 * folder: the log made it when it opened, and a folder removed since reads as fenced.
 *
 * <p>Threads: one daemon thread of its own, which does all the file work. {@link #next} and
 * {@link #take} are called by the log's writer and never wait for I/O.
 */
final class SegmentPreparer implements Closeable {
  /** A prepared segment, open for writing after its header. */
  record Prepared(long number, WritableFile file) {}

  /** The writer's next segment: a prepared one, or (prepared null) the number of a plain one to make. */
  record Next(Prepared prepared, long number) {}

  private static final String PREPARING = ".prep";
  /** Zeros written per call; the file is synced after each, so the disk's queue stays short. */
  private static final int CHUNK = 1 << 20;
  /** The log's write rate above which preparing pauses. */
  static final long BUSY_BYTES_PER_SECOND = 16L << 20;
  /** The shortest time over which the log's rate is measured. */
  private static final long RATE_WINDOW_NANOS = 20_000_000;
  /**
   * How long a pause lasts; the rate is then measured over it. A second: long enough to span
   * the log's own stalls under load (a flush's sync), so that the zeros do not fill them.
   */
  private static final long PAUSE_NANOS = 1_000_000_000;

  private final Storage storage;
  private final String dir;
  private final long segmentBytes;
  /** Whether the log acknowledges nothing more: the folder then belongs to its recovery, not to us. */
  private final BooleanSupplier lost;
  private final BiConsumer<String, Throwable> failures;
  /** Hears of each blank segment left in the folder (by its path). */
  private final Consumer<String> leftBlank;
  /** The bytes the log has written so far, read from the preparer's thread. */
  private final LongSupplier logBytes;
  private final Thread thread;
  /** Where the current measure of the log's rate began: its time and the log's bytes then. Owned by the preparer's thread. */
  private long rateSince;
  private long rateBytes;

  private final Object lock = new Object();
  /** The highest segment number handed out. */
  @GuardedBy("lock")
  private long lastNumber;
  /** The number of the writer's newest segment; never goes down. */
  @GuardedBy("lock")
  private long writerNumber;
  /** A prepared segment above {@link #writerNumber}, or null. */
  @GuardedBy("lock")
  private Prepared ready;
  @GuardedBy("lock")
  private boolean closed;
  /** After a failed preparation: the writer's segment then; the next try waits for a newer one. */
  @GuardedBy("lock")
  private long failedAt = -1;

  /**
   * @param after the highest segment number already in the folder
   * @param prepare whether to prepare segments at all (false: only numbers are handed out)
   * @param logBytes the bytes the log has written so far, readable from any thread
   */
  SegmentPreparer(Storage storage, String dir, long segmentBytes, long after, boolean prepare, BooleanSupplier lost,
      BiConsumer<String, Throwable> failures, Consumer<String> leftBlank, LongSupplier logBytes) {
    this.storage = storage;
    this.dir = dir;
    this.segmentBytes = segmentBytes;
    this.lost = lost;
    this.failures = failures;
    this.leftBlank = leftBlank;
    this.logBytes = logBytes;
    this.lastNumber = after;
    this.writerNumber = after;
    if (prepare && storage.canOverwrite()) {
      thread = new Thread(this::run, "tabula-commit-log-prepare");
      thread.setDaemon(true);
      thread.start();
    } else {
      thread = null;
    }
  }

  /**
   * The writer's next segment, in one step under the lock: the ready prepared segment if there
   * is one, else a number above every number handed out, for a plain segment the writer makes.
   * (Two steps, a look for a ready segment and then a number, would let a segment prepared in
   * between be taken later, below the plain one.)
   */
  Next next() {
    synchronized (lock) {
      Prepared p = takeReady();
      if (p != null) {
        return new Next(p, p.number());
      }
      writerNumber = ++lastNumber;
      lock.notifyAll(); // a failed preparation may try again
      return new Next(null, writerNumber);
    }
  }

  /** The ready prepared segment, if there is one (its number is above every segment of the writer's). */
  Prepared take() {
    synchronized (lock) {
      return takeReady();
    }
  }

  @GuardedBy("lock")
  private Prepared takeReady() {
    Prepared p = ready;
    if (p != null) {
      ready = null;
      writerNumber = p.number(); // above it: a stale segment is never made ready
      lock.notifyAll();
    }
    return p;
  }

  /** Waits until a prepared segment is ready, at most {@code millis}; whether one is. For tests. */
  boolean awaitReady(long millis) throws InterruptedException {
    long until = System.nanoTime() + millis * 1_000_000;
    synchronized (lock) {
      while (ready == null && !closed) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        lock.wait(Math.max(1, left / 1_000_000));
      }
      return ready != null;
    }
  }

  private void run() {
    try {
      deleteLeftovers();
      loop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) { // a bug, or a storage that throws unchecked: the log goes on with plain segments
      failures.accept("preparing commit-log segments in " + dir + " (the log appends to plain segments from now on)",
          e);
    }
  }

  private void loop() throws InterruptedException {
    while (true) {
      long n;
      synchronized (lock) {
        while (!closed && (ready != null || failedAt == writerNumber)) {
          lock.wait();
        }
        if (closed) {
          return;
        }
        n = ++lastNumber;
      }
      Prepared p;
      try {
        p = prepare(n);
      } catch (IOException | RuntimeException e) {
        synchronized (lock) {
          failedAt = writerNumber;
        }
        if (!lost.getAsBoolean()) {
          failures.accept("preparing commit-log segment " + Storage.path(dir, CommitLogFormat.segmentName(n))
              + " (the log appends to plain segments meanwhile)", e);
        }
        continue;
      }
      if (p == null) {
        return; // closed, or the log was lost, while it was being made
      }
      boolean stale;
      synchronized (lock) {
        stale = closed || n < writerNumber;
        if (!stale) {
          ready = p;
          lock.notifyAll();
        }
      }
      if (stale) {
        leave(p);
      }
    }
  }

  /**
   * Makes segment {@code n}; null if the log was closed or lost meanwhile. What it leaves
   * half made is deleted, unless the log is lost (then the folder is not ours to touch, and a
   * file with that suffix is no segment to anyone: the next process that prepares segments in
   * the folder deletes it, or it goes with the folder). A segment named but not opened (the
   * folder's sync or the open failed) is left blank.
   */
  private Prepared prepare(long n) throws IOException {
    String name = Storage.path(dir, CommitLogFormat.segmentName(n));
    String tmp = name + PREPARING;
    byte[] zeros = new byte[CHUNK];
    try {
      try (WritableFile w = storage.createNewInFolder(tmp)) { // never makes the log's folder again
        w.append(LogRecords.header(n));
        rateSince = System.nanoTime();
        rateBytes = logBytes.getAsLong();
        while (w.position() < segmentBytes && !stopping()) {
          if (pausedForBusyLog()) {
            continue;
          }
          w.append(zeros, 0, (int) Math.min(CHUNK, segmentBytes - w.position()));
          w.sync();
        }
      }
      if (stopping()) {
        deleteUnlessLost(tmp);
        return null;
      }
    } catch (IOException | RuntimeException e) {
      try {
        deleteUnlessLost(tmp);
      } catch (IOException | RuntimeException alsoFailed) {
        e.addSuppressed(alsoFailed);
      }
      throw e;
    }
    storage.rename(tmp, name);
    try {
      storage.syncDirectory(dir);
      return new Prepared(n, storage.overwrite(name, CommitLogFormat.HEADER_SIZE));
    } catch (IOException | RuntimeException e) {
      leftBlank.accept(name);
      throw e;
    }
  }

  /**
   * Pauses for {@link #PAUSE_NANOS} if the log wrote more than {@link #BUSY_BYTES_PER_SECOND}
   * since the last measure (taken over at least {@link #RATE_WINDOW_NANOS}); whether it did.
   * A close ends the pause.
   */
  private boolean pausedForBusyLog() {
    long now = System.nanoTime();
    long elapsed = now - rateSince;
    if (elapsed < RATE_WINDOW_NANOS) {
      return false;
    }
    long bytes = logBytes.getAsLong();
    boolean busy = (bytes - rateBytes) * 1e9 / elapsed > BUSY_BYTES_PER_SECOND;
    rateSince = now;
    rateBytes = bytes;
    if (busy) {
      long until = now + PAUSE_NANOS;
      synchronized (lock) {
        long left;
        while (!closed && (left = until - System.nanoTime()) > 0) {
          try {
            lock.wait(Math.max(1, left / 1_000_000));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // nobody interrupts this thread; its next wait ends it
            break;
          }
        }
      }
    }
    return busy;
  }

  private void deleteUnlessLost(String path) throws IOException {
    if (!lost.getAsBoolean()) {
      storage.delete(path);
    }
  }

  private boolean stopping() {
    synchronized (lock) {
      if (closed) {
        return true;
      }
    }
    return lost.getAsBoolean();
  }

  /** Removes preparations an earlier process left half made (never segments: not named as one). */
  private void deleteLeftovers() {
    try {
      if (lost.getAsBoolean()) {
        return;
      }
      for (String name : storage.list(dir)) {
        if (name.endsWith(CommitLogFormat.SUFFIX + PREPARING)) {
          storage.delete(Storage.path(dir, name));
        }
      }
    } catch (IOException | RuntimeException e) {
      failures.accept("deleting half-made commit-log segments in " + dir, e);
    }
  }

  /** Closes a prepared segment nobody will write, and leaves it, blank, to {@link #leftBlank}. */
  private void leave(Prepared p) {
    try {
      p.file().close();
    } catch (IOException e) {
      failures.accept("closing the unused commit-log segment " + p.file().path(), e);
    }
    leftBlank.accept(p.file().path());
  }

  /**
   * Stops the preparer; a segment it made that was not taken is left blank ({@link #leave}).
   * Waits for the thread, which stops within one {@link #CHUNK} of work.
   */
  @Override
  public void close() throws IOException {
    Prepared left;
    synchronized (lock) {
      closed = true;
      left = ready;
      ready = null;
      lock.notifyAll();
    }
    if (thread != null) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while stopping the commit-log preparer of " + dir, e);
      }
    }
    if (left != null) {
      leave(left);
    }
  }
}
