package io.tabula.persistence.wal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

/**
 * The node's commit log (paper §6 "Commit-log implementation"): one log shared by every
 * tablet of the node, each record tagged with its tablet id and sequence number, written
 * in segments under one folder. Layout: docs/formats/commitlog.md.
 *
 * <p>Group commit: {@link #append} queues a record and returns at once; one writer thread
 * takes everything queued, writes it as one batch with one call and fsyncs once, then
 * completes every record's future. Nothing is reported durable before its fsync returned.
 * Since only one batch is ever unsynced, a power cut can only damage the last batch of the
 * last segment: that is how replay tells a torn tail from corruption ({@link LogReader}).
 *
 * <p>Segments: on a local disk the writer writes over segments made ahead of need, zero-filled
 * and synced ({@link SegmentPreparer}), so that its syncs change no file metadata; it never
 * waits for one, and appends to a plain segment when none is ready. In {@link
 * Durability#OS_BUFFERED} mode the segment being written is synced in the background every
 * MiB ({@link WriteBack}), so the sync that seals it at a roll has little left to write.
 *
 * <p>Failure: if a write fails, every record of that group fails with the {@link
 * IOException}; the segment is cut back to its last synced length and sealed, and the next
 * group starts a new segment, so a failed record is never replayed. If the cut fails (HDFS
 * cannot cut back a file open for writing), the log is lost as below. A failed write in a
 * fenced folder fails as fenced (on HDFS the fence's lease recovery is what breaks the
 * stream). If an <em>fsync</em> fails, the log
 * is lost ({@link LogSyncFailedException}): after a failed fsync the operating system may
 * report later ones as done without writing what it dropped, so nothing more is
 * acknowledged, and the folder is left as it is for a recovery elsewhere ({@link #whenLost}).
 *
 * <p>Fencing (docs/fencing.md): after each group's fsync, and before any of its records is
 * acknowledged, the writer checks whether the folder has been fenced
 * ({@link Storage#isFenced}). If it has, the group fails with {@link LogFencedException}, the
 * log fails as a whole, and nothing in the folder is touched again (no cut, no deletion):
 * another node recovers it now. So every acknowledged record was durable before the fence was
 * set, and a recovery that reads the folder after setting the fence sees it. With {@link
 * Durability#OS_BUFFERED} the writer checks after each group's {@linkplain WritableFile#flush
 * flush} out of the process (to the page cache; on HDFS, the datanodes): an acknowledged record
 * was in the folder's file before the fence, and a recovery reads it, unless memory was lost. The log
 * makes its folder when it opens, and never again: segments are made only in the folder as it
 * is ({@link Storage#createNewInFolder}), and a folder that is gone reads as fenced, so a log
 * whose folder was removed under it acknowledges nothing more.
 *
 * <p>Invariants: (1) records of one caller appear in the log in call order; (2) a sealed
 * segment was fully synced before the next was started; (3) only sealed segments whose
 * records are all at or below their tablets' redo points are deleted.
 *
 * <p>Thread-safe. {@link #close()} writes and syncs what is queued, then stops the writer.
 * Locks: one monitor, {@link #queue}'s, guards what callers and the writer thread share (the
 * queue, closing, the failure); the writer's own state is its thread's alone. The sealed
 * segments ({@link SealedSegments}), the preparer ({@link SegmentPreparer}) and the readers'
 * fence looks ({@link FenceChecks}) have locks of their own, each taken alone: this class
 * calls them, and completes futures, only without holding {@link #queue}.
 */
public final class CommitLog implements Closeable {
  private record Pending(String tabletId, byte[] tabletIdBytes, long sequence, Consumer<ByteSink> payload,
      CompletableFuture<Void> done) {}

  // Set at open: immutable, or thread-safe themselves.
  private final Storage storage;
  private final String dir;
  private final CommitLogOptions options;
  private final List<String> oldSegments;
  private final Thread writer;
  /** Sealed segments (old and rolled) with the highest sequence of each tablet in them; its own lock. */
  private final SealedSegments sealed;
  /** Makes the next segment ahead of the writer, and hands out segment numbers; its own lock. */
  private final SegmentPreparer preparer;
  /** Readers' looks at the fence, shared ({@link #isFenced}); its own lock. */
  private final FenceChecks fenceChecks;
  /** Completes once a group found the folder fenced. */
  private final CompletableFuture<Void> fenced = new CompletableFuture<>();
  /** Completes, with why, once the log acknowledges nothing more: fenced, or an fsync failed. */
  private final CompletableFuture<LogLostException> lost = new CompletableFuture<>();
  /** Group commit's spins, and the count of records queued they watch (set under the lock, read without). */
  private final GroupCommitWaits waits = new GroupCommitWaits();

  // Shared by callers and the writer thread, under the log's one lock: the queue's monitor.
  /** Records queued for the writer. */
  @GuardedBy("queue")
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  @GuardedBy("queue")
  private boolean closing;
  @GuardedBy("queue")
  private IOException failure;

  // Owned by the writer thread.
  private WritableFile current;
  /** Whether {@link #current} was prepared (zero-filled to the segment size) rather than appended to. */
  private boolean currentPrepared;
  private long synced;
  private final Map<String, Long> currentMax = new HashMap<>();
  private final ByteSink batch = new ByteSink(1 << 16);
  /** In OS_BUFFERED mode, syncs the current segment in the background as it grows; else null. */
  private final WriteBack writeBack;
  private static final long WRITE_BACK_BYTES = 1 << 20;

  // Totals for the node's metrics: written only by the writer thread, read by any.
  private volatile long groupsWritten;
  private volatile long recordsWritten;
  private volatile long bytesWritten;
  private volatile long syncs;
  private volatile long syncNanos;

  /**
   * What the log has written since it opened: groups (one write and, with
   * {@link Durability#FSYNC}, one sync each), their records and bytes, and the syncs with
   * their total time. Monotonic totals for the node's metrics.
   */
  public record Stats(long groups, long records, long bytes, long syncs, long syncNanos) {}

  /** The totals so far; the fields are read one by one, so a group may be half counted. */
  public Stats stats() {
    return new Stats(groupsWritten, recordsWritten, bytesWritten, syncs, syncNanos);
  }

  private CommitLog(Storage storage, String dir, CommitLogOptions options, List<String> oldSegments, long highest,
      BiConsumer<String, Throwable> failures) {
    this.storage = storage;
    this.dir = dir;
    this.fenceChecks = new FenceChecks(() -> storage.isFenced(dir));
    this.options = options;
    this.oldSegments = oldSegments;
    this.sealed = new SealedSegments(oldSegments);
    // Only an fsync'd log gains from them: a buffered one syncs at its rolls only, and the zeros would cost it.
    this.preparer = new SegmentPreparer(storage, dir, options.segmentBytes(), highest,
        options.preallocate() && options.durability() == Durability.FSYNC, this::isLost, failures,
        sealed::leftBlank, () -> bytesWritten);
    this.writeBack = options.durability() == Durability.OS_BUFFERED ? new WriteBack(dir, WRITE_BACK_BYTES) : null;
    this.writer = new Thread(this::run, "tabula-commit-log");
    this.writer.setDaemon(true);
  }

  /**
   * Opens the log in {@code dir}, reporting the failures of its background work (making
   * segments ahead of need) to the platform logger. See {@link #open(Storage, String,
   * CommitLogOptions, BiConsumer)}.
   */
  public static CommitLog open(Storage storage, String dir, CommitLogOptions options) throws IOException {
    System.Logger log = System.getLogger(CommitLog.class.getName());
    return open(storage, dir, options, (what, e) -> log.log(System.Logger.Level.WARNING, what + " failed", e));
  }

  /**
   * Opens the log in {@code dir}, making the folder if it does not exist. Segments already
   * there become the old segments, read by {@link #replay}; new records go to a new segment
   * numbered after them. The failures of its background work, which cost speed but lose
   * nothing, go to {@code failures}.
   */
  public static CommitLog open(Storage storage, String dir, CommitLogOptions options,
      BiConsumer<String, Throwable> failures) throws IOException {
    storage.createDirectories(dir); // the only time the folder is made: a folder removed later reads as fenced
    List<String> names = LogPieces.segments(storage, dir);
    long highest = names.isEmpty() ? 0 : CommitLogFormat.segmentNumber(names.get(names.size() - 1));
    List<String> old = names.stream().map(n -> Storage.path(dir, n)).toList();
    CommitLog log = new CommitLog(storage, dir, options, old, highest, failures);
    log.writer.start();
    return log;
  }

  /**
   * Queues one record; the future completes once it is durable (see {@link Durability}),
   * or fails with the {@link IOException} that kept it from being so.
   */
  public CompletableFuture<Void> append(String tabletId, long sequence, byte[] payload) {
    return append(tabletId, sequence, out -> out.put(payload));
  }

  /**
   * Like {@link #append(String, long, byte[])}, with the payload written by {@code payload}
   * straight into the batch on the writer's thread (no copy, and the caller's thread only
   * queues). {@code payload} must write the same bytes whenever it is called, from any thread.
   */
  public CompletableFuture<Void> append(String tabletId, long sequence, Consumer<ByteSink> payload) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    Pending p = new Pending(tabletId, tabletId.getBytes(StandardCharsets.UTF_8), sequence, payload, done);
    synchronized (queue) {
      if (failure != null) {
        done.completeExceptionally(new IOException("commit log " + dir + " has failed: " + failure.getMessage(),
            failure));
      } else if (closing) {
        done.completeExceptionally(new IllegalStateException("commit log " + dir + " is closed"));
      } else {
        queue.add(p);
        waits.queued(queue.size());
        if (queue.size() == 1) {
          queue.notify();
        }
      }
    }
    return done;
  }

  private void run() {
    List<Pending> group = new ArrayList<>();
    while (true) {
      waits.awaitBriefly();
      synchronized (queue) {
        while (queue.isEmpty() && !closing) {
          try {
            queue.wait();
          } catch (InterruptedException e) {
            closing = true;
          }
        }
        if (queue.isEmpty()) {
          break;
        }
        group.addAll(queue);
        queue.clear();
        waits.queued(0);
      }
      if (options.durability() == Durability.FSYNC) {
        lingerForMore(group);
      }
      writeGroup(group);
      group.clear();
    }
    try {
      syncAndSeal();
    } catch (IOException e) {
      synchronized (queue) {
        failure = failure == null ? e : failure;
      }
    }
  }

  /** After the linger ({@link GroupCommitWaits#lingerForMore}): adds what queued meanwhile to {@code group}. */
  private void lingerForMore(List<Pending> group) {
    waits.lingerForMore();
    synchronized (queue) {
      group.addAll(queue);
      queue.clear();
      waits.queued(0);
    }
  }

  private void writeGroup(List<Pending> group) {
    if (lost.isDone()) {
      LogLostException why = lost.join();
      group.forEach(p -> p.done().completeExceptionally(why));
      return;
    }
    try {
      batch.reset();
      batch.put(new byte[CommitLogFormat.BATCH_HEADER_SIZE]); // filled in below
      for (java.util.Iterator<Pending> it = group.iterator(); it.hasNext(); ) {
        Pending p = it.next();
        boolean fits;
        try {
          fits = LogRecords.append(batch, p.tabletIdBytes(), p.sequence(), p.payload());
        } catch (RuntimeException e) {
          p.done().completeExceptionally(e);
          it.remove();
          continue;
        }
        if (!fits) {
          p.done().completeExceptionally(new IllegalArgumentException("commit-log record for tablet " + p.tabletId()
              + " is over the limit of " + CommitLogFormat.MAX_BODY + " bytes"));
          it.remove();
        }
      }
      if (group.isEmpty()) {
        return;
      }
      LogRecords.batchHeader(batch.array(), 0, batch.size() - CommitLogFormat.BATCH_HEADER_SIZE, group.size());
      segmentFor(batch.size());
      current.append(batch.array(), 0, batch.size());
      if (writeBack != null) {
        writeBack.wrote(current);
      }
      if (options.durability() == Durability.FSYNC) {
        long t = System.nanoTime();
        try {
          current.sync();
        } catch (IOException e) {
          // On HDFS a fence (lease recovery) is what makes the sync fail: report it as such.
          if (!fencedOrUnknown(group)) {
            failLost(group, new LogSyncFailedException(dir, e));
          }
          return;
        }
        long took = System.nanoTime() - t;
        waits.synced(took);
        syncs++;
        syncNanos += took;
      } else {
        current.flush(); // out of this process before the fence look: on HDFS, out of the client's buffer
      }
      groupsWritten++;
      recordsWritten += group.size();
      bytesWritten += batch.size();
      synced = current.position();
      if (fencedOrUnknown(group)) { // in both modes: a buffered log must not outlive its fence either
        return;
      }
    } catch (LogSyncFailedException e) {
      failLost(group, e); // sealing the segment left for a prepared one failed its sync
      return;
    } catch (IOException e) {
      if (fencedOrUnknown(group)) {
        return; // on HDFS, fencing breaks the writer's stream: its write fails as fenced
      }
      IOException err = new IOException("commit log write of " + group.size() + " records failed: " + e.getMessage(), e);
      group.forEach(p -> p.done().completeExceptionally(err));
      recoverFrom(e);
      return;
    }
    for (Pending p : group) {
      currentMax.merge(p.tabletId(), p.sequence(), Math::max);
    }
    group.forEach(p -> p.done().complete(null));
    if (synced >= options.segmentBytes()) {
      try {
        syncAndSeal();
      } catch (LogSyncFailedException e) {
        failLost(List.of(), e);
      } catch (IOException e) {
        recoverFrom(e);
      }
    }
  }

  /**
   * Makes {@link #current} a segment for a batch of {@code length} bytes: a prepared one if one
   * is ready and the current segment is a plain one (a prepared segment's syncs are cheaper)
   * or has no room left for the batch; otherwise the current one (a batch that does not fit
   * then makes it longer), or a new plain one if there is none. The segment left is sealed:
   * in FSYNC mode it was synced already, so this waits for nothing.
   */
  private void segmentFor(int length) throws IOException {
    if (current != null && (!currentPrepared || current.position() + length > options.segmentBytes())) {
      SegmentPreparer.Prepared p = preparer.take();
      if (p != null) {
        try {
          syncAndSeal();
        } catch (IOException e) {
          p.file().close(); // blank, and numbered after the one that failed to seal: replay skips it
          sealed.leftBlank(p.file().path());
          throw e;
        }
        use(p);
      }
    }
    if (current == null) {
      SegmentPreparer.Next next = preparer.next();
      if (next.prepared() != null) {
        use(next.prepared());
      } else {
        long number = next.number();
        // Only in the folder as it is: if it was removed, this fails and the log is lost as fenced.
        current = storage.createNewInFolder(Storage.path(dir, CommitLogFormat.segmentName(number)));
        currentPrepared = false;
        synced = 0;
        current.append(LogRecords.header(number)); // synced with the first batch
      }
    }
  }

  private void use(SegmentPreparer.Prepared p) {
    current = p.file();
    currentPrepared = true;
    synced = current.position(); // the header, synced when it was made
  }

  /**
   * Whether the folder is fenced, or whether that cannot be told (the storage cannot be
   * reached): either way {@code group} is not acknowledged, and the log is lost, so this
   * fails it and returns true.
   */
  private boolean fencedOrUnknown(List<Pending> group) {
    boolean fencedNow;
    try {
      fencedNow = storage.isFenced(dir);
    } catch (RuntimeException e) { // the look failed (UncheckedIOException), or the storage broke otherwise
      failLost(group, new LogSyncFailedException(dir, e instanceof java.io.UncheckedIOException u ? u.getCause() : e));
      return true;
    }
    if (fencedNow) {
      failLost(group, new LogFencedException(dir));
    }
    return fencedNow;
  }

  /**
   * The log is lost (fenced, or an fsync failed): fails {@code group} and everything queued,
   * and every later append, with {@code why}.
   */
  private void failLost(List<Pending> group, LogLostException why) {
    // Known lost before any writer hears of it, so a writer that sees its failure finds it so.
    if (why instanceof LogFencedException) {
      fenced.complete(null);
    }
    lost.complete(why);
    group.forEach(p -> p.done().completeExceptionally(why));
    List<Pending> queued;
    synchronized (queue) {
      failure = why;
      queued = new ArrayList<>(queue);
      queue.clear();
      waits.queued(0);
    }
    queued.forEach(p -> p.done().completeExceptionally(why)); // outside the lock: their callbacks may append
  }

  /**
   * Completes, with why, once this log acknowledges nothing more: a group found its folder
   * fenced, or an fsync failed. The node must then stop serving its tablets without flushing
   * them: they are (or are about to be) recovered from the log elsewhere.
   */
  public CompletableFuture<LogLostException> whenLost() {
    return lost.copy();
  }

  /** Whether this log acknowledges nothing more ({@link #whenLost}), or its folder is fenced now. */
  public boolean isLost() {
    return lost.isDone() || storage.isFenced(dir);
  }

  /**
   * Whether this log's folder is fenced: found so by a group, or marked so as found by a look
   * at the storage that began after this call (shared with other callers: {@link FenceChecks}).
   */
  public boolean isFenced() {
    return fenced.isDone() || fenceChecks.fenced();
  }

  /** Throws {@link LogFencedException} if this log's folder is fenced (see {@link #isFenced}). */
  public void checkNotFenced() throws LogFencedException {
    if (isFenced()) {
      throw new LogFencedException(dir);
    }
  }

  /**
   * After a failed write: cut the segment back to what was synced, seal it, and go on in a
   * new one. The cut is synced if the disk lets us; if not, the next segment's fsync
   * (a journal commit on the file systems we run on) carries it.
   */
  private void recoverFrom(IOException cause) {
    if (current == null) {
      return; // the segment was never created: nothing to cut back
    }
    try {
      if (writeBack != null) {
        try {
          writeBack.await(); // nothing syncs the file while it is cut
        } catch (LogSyncFailedException e) {
          e.addSuppressed(cause);
          failLost(List.of(), e);
          return;
        }
      }
      current.truncate(synced);
      try {
        current.sync();
      } catch (IOException syncFailed) {
        if (syncFailed != cause) { // a broken stream rethrows the same exception
          syncFailed.addSuppressed(cause);
        }
        failLost(List.of(), new LogSyncFailedException(dir, syncFailed));
        return;
      }
      seal();
    } catch (IOException e) {
      // The segment cannot be cut back to what was synced (HDFS cannot cut a file open for
      // writing), so nothing more may follow it: the log is lost, as after a failed sync, and
      // its tablets are recovered from what it synced.
      if (e != cause) {
        e.addSuppressed(cause);
      }
      failLost(List.of(), new LogSyncFailedException(dir, e));
    }
  }

  /**
   * Seals the current segment at a roll or at close. In OS_BUFFERED mode its last batches
   * were never synced, so they are synced here: a sealed segment is always whole on disk,
   * and damage in it can only be corruption, never a torn tail.
   */
  private void syncAndSeal() throws IOException {
    if (current != null && writeBack != null && !lost.isDone()) {
      writeBack.await();
      try {
        current.sync();
      } catch (IOException e) {
        throw new LogSyncFailedException(dir, e);
      }
      synced = current.position();
    }
    seal();
  }

  private void seal() throws IOException {
    if (current == null) {
      return;
    }
    String path = current.path();
    WritableFile f = current;
    current = null;
    f.close();
    sealed.sealed(path, currentMax);
    currentMax.clear();
  }

  /**
   * Reads the old segments in order, delivering each valid record. See {@link LogReader}
   * for what counts as a torn tail (reported, and cut off the segment) and what as
   * corruption (thrown).
   */
  public ReplayResult replay(RecordVisitor visitor) throws IOException {
    return LogReplay.replay(storage, dir, oldSegments, visitor, sealed::sealed);
  }

  /**
   * Reads the log another incarnation left in {@code dir} (read only: nothing is cut or
   * deleted), delivering each valid record in order. A torn tail of its last segment is the
   * crash that ended it and is skipped; damage anywhere else is thrown. The folder must no
   * longer be written to.
   *
   * @return how many records were delivered
   * @throws LogFolderMissingException if there is no folder {@code dir}
   */
  public static long readFolder(Storage storage, String dir, RecordVisitor visitor) throws IOException {
    return LogReplay.readFolder(storage, dir, visitor);
  }

  /**
   * Deletes sealed segments none of whose records is needed: for every tablet in the
   * segment, its highest sequence there is at or below {@code durableUpTo} of that tablet.
   */
  public void deleteObsoleteSegments(ToLongFunction<String> durableUpTo) throws IOException {
    try {
      if (isLost()) {
        return; // the folder is (about to be) recovered by another node: it decides what is obsolete
      }
    } catch (java.io.UncheckedIOException e) {
      throw e.getCause(); // whether it is fenced cannot be told: delete nothing
    }
    for (String p : sealed.takeObsolete(durableUpTo)) {
      storage.delete(p);
      storage.delete(LogPieces.pieceOf(p)); // if a tablet reopened here had it sorted; a no-op otherwise
    }
  }

  /**
   * Waits until a prepared segment is ready for the writer, at most {@code millis}; whether one
   * is (never, if segments are not prepared). The writer moves to it at its next group if it is
   * writing a plain one. For tests and benchmarks that want a known layout.
   */
  public boolean awaitPreparedSegment(long millis) throws InterruptedException {
    return preparer.awaitReady(millis);
  }

  /** Segments on disk that are sealed (for tests and operations). */
  public List<String> sealedSegments() {
    return sealed.paths();
  }

  /** Writes and syncs everything queued, stops the writer, closes the current segment. */
  @Override
  public void close() throws IOException {
    synchronized (queue) {
      closing = true;
      queue.notifyAll();
    }
    try {
      writer.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while closing commit log " + dir, e);
    }
    preparer.close();
    if (writeBack != null) {
      writeBack.close();
    }
    synchronized (queue) {
      if (failure != null) {
        throw new IOException("commit log " + dir + " failed: " + failure.getMessage(), failure);
      }
    }
  }
}
