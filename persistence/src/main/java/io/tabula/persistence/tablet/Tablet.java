package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.encoding.MutationCodec;
import io.tabula.persistence.memtable.Memtable;
import io.tabula.persistence.model.InvalidMutationException;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.read.RowReader;
import io.tabula.persistence.schema.TableSchema;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.UnaryOperator;

/**
 * One tablet (paper §5.3): a row range of a table, with its memtable and its SSTables per
 * locality group, served from this node.
 *
 * <p>Writes ({@link #apply}) get sequence numbers and go into the memtable and to the node's commit log;
 * only once the log has them durable are they made visible, a whole row mutation at once (a write the log
 * fails is taken out of the memtable again). Reads ({@link #read}, {@link #scan}) see a snapshot: the
 * highest sequence below which every write is visible, over a pinned {@link TabletVersion}. Full memtables
 * are frozen and flushed ({@link TabletFlushes}), and SSTables merged ({@link TabletMerges}), on the node's
 * background executors, each change of files committed to the manifest ({@link TabletFiles}).
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>The visible sequence ({@link TabletSequence}) only grows, and every write with a sequence at or below it is
 *       in the memtables or SSTables of every version published since; entries above it are
 *       invisible to every reader.
 *   <li>The manifest's redo point never passes a write that is not in one of its SSTables.
 *   <li>The version changes only through {@link #changeVersion}, under the write side of
 *       {@code memLock}; memtable adds hold its read side, so a freeze never races an add.
 * </ol>
 *
 * <p>Lock order, for the tablet and its parts (a thread holding one of these takes only
 * those after it): a flush's {@code flushLock} or a merge's {@code mergeLock} (never both;
 * {@link TabletFlushes}, {@link TabletMerges}), then the files' {@code lock}
 * ({@link TabletFiles}), then {@code memLock} (write side, in {@link #changeVersion}), then
 * the sequence's lock ({@link TabletSequence}). The flush-capacity monitor and this tablet's own
 * monitor ({@link #updateSchema}) are taken alone.
 * No part takes another's lock: each goes through the owner's methods.
 *
 * Thread-safe. Closing flushes the memtable; the node's shared parts stay open.
 */
public final class Tablet implements Closeable {
  final TabletEnv env;
  final String dir;
  /** The tablet's manifest and the changes to its files. */
  private final TabletFiles files;
  private final TabletFlushes flushes;
  private final TabletMerges merges;
  private volatile TableSchema schema;
  /** Replaced under the write side of {@link #memLock}; read by any thread. */
  private volatile TabletVersion current;
  /** Version lock: its write side is held while {@link #current} is replaced, its read side while a memtable add runs. */
  private final ReentrantReadWriteLock memLock = new ReentrantReadWriteLock();

  /** Sequence numbers, visibility, and whether writes are taken. */
  private final TabletSequence sequence;
  /** Server-assigned timestamps: never below the highest the tablet handed out. */
  private final ServerTimes serverTimes;
  /** The tablet's changes for change streams. */
  private final TabletChangeLog changes;

  private final String table;
  private final String tabletId;
  private final byte[] startRow;
  private final byte[] endRow;

  private Tablet(TabletEnv env, TableSchema schema, TabletManifest manifest, long manifestVersion,
      TabletVersion version) {
    this.env = env;
    this.schema = schema;
    this.tabletId = manifest.tabletId();
    this.startRow = manifest.startRow();
    this.endRow = manifest.endRow();
    this.table = manifest.table();
    this.dir = dirOf(manifest.table(), manifest.tabletId());
    this.current = version;
    this.sequence = new TabletSequence(manifest.tabletId(), manifest.lastSequence());
    this.serverTimes = new ServerTimes(env.clock(), manifest.maxServerTime());
    this.files = new TabletFiles(this, manifest, manifestVersion, serverTimes);
    this.flushes = new TabletFlushes(this, files, this::scheduleMerge);
    this.merges = new TabletMerges(this, files, flushes);
    this.changes = new TabletChangeLog(this, manifest.redoPoint(), serverTimes);
  }

  /** After a flush: a merging compaction may be due. */
  private void scheduleMerge() {
    merges.schedule();
  }

  /** Where a tablet's manifest and own SSTables live under the storage root. */
  public static String dirOf(String table, String tabletId) {
    requireName("table", table);
    requireName("tablet id", tabletId);
    return "tables/" + table + "/" + tabletId;
  }

  private static void requireName(String what, String s) {
    if (s == null || s.isEmpty() || !s.matches("[A-Za-z0-9_.-]+") || s.startsWith(".")) {
      throw new IllegalArgumentException(what + " '" + s + "' must be non-empty and use only letters, digits, '_', '-', '.'");
    }
  }

  /** Creates a new, empty tablet for rows {@code [startRow, endRow)} (empty end: unbounded). */
  public static Tablet create(TabletEnv env, TableSchema schema, String table, String tabletId, byte[] startRow,
      byte[] endRow) throws IOException {
    String dir = dirOf(table, tabletId);
    if (ManifestCodec.exists(env.storage(), dir)) {
      throw new IllegalStateException("tablet " + tabletId + " of table " + table + " already exists");
    }
    TabletManifest m = TabletManifest.empty(table, tabletId, startRow, endRow);
    ManifestCodec.Versioned v = ManifestCodec.create(env.storage(), dir, m);
    if (v.manifest() != m) {
      throw new IllegalStateException("tablet " + tabletId + " of table " + table + " already exists");
    }
    return open(env, schema, v);
  }

  /**
   * Opens an existing tablet from its manifest, claiming it (a new manifest version of this
   * owner's, so that an earlier owner's later commit fails); the caller then replays the log
   * past {@link #redoPoint()}.
   */
  public static Tablet open(TabletEnv env, TableSchema schema, String table, String tabletId) throws IOException {
    ManifestCodec.Versioned v = ManifestCodec.claim(env.storage(), dirOf(table, tabletId));
    TabletManifest m = v.manifest();
    if (m.state() != TabletManifest.State.ACTIVE) {
      throw new TabletUnavailableException("tablet " + tabletId + " was split into " + m.split().leftId() + " and "
          + m.split().rightId());
    }
    return open(env, schema, v);
  }

  /** Opens a tablet from manifest {@code v}, which this owner holds (it claimed or wrote that version). */
  static Tablet open(TabletEnv env, TableSchema schema, ManifestCodec.Versioned v) throws IOException {
    TabletManifest m = v.manifest();
    Tablet t = new Tablet(env, schema, m, v.version(), new TabletVersion(env.newMemtable(), List.of(),
        SSTableFiles.openAll(env, schema, m)));
    env.memtables().register(t);
    t.changes.opened();
    return t;
  }

  /** The table this tablet is a row range of. */
  public String table() {
    return table;
  }

  public String id() {
    return tabletId;
  }

  public byte[] startRow() {
    return startRow.clone();
  }

  /** Exclusive end row; empty for unbounded. */
  public byte[] endRow() {
    return endRow.clone();
  }

  public TableSchema schema() {
    return schema;
  }

  /** Takes a new schema for later reads and compactions; a group now in memory or not is reopened in the background. */
  public synchronized void updateSchema(TableSchema newSchema) {
    TableSchema before = schema;
    this.schema = newSchema; // before the reopens are scheduled: they follow the schema they find
    files.schemaChanged(before, newSchema);
    changes.retentionChanged(before.changeRetentionMicros(), newSchema.changeRetentionMicros());
  }

  /** The sequence up to which every write is in SSTables; the log is replayed past it. */
  public long redoPoint() {
    return files.redoPoint();
  }

  /** The highest sequence number whose write (and every earlier one) is visible to reads. */
  public long visibleSequence() {
    return sequence.visible();
  }

  public boolean containsRow(byte[] row) {
    return ByteArrays.compare(row, startRow) >= 0 && (endRow.length == 0 || ByteArrays.compare(row, endRow) < 0);
  }

  /**
   * Applies a row mutation atomically. The future completes once it is durable in the
   * commit log and visible to reads; it fails with the log's {@link IOException} (wrapped in
   * a {@link CompletionException}) if the log could not make it durable, in which case
   * nothing of it is applied. May block the caller while flushes catch up.
   *
   * @throws InvalidMutationException for a family not in the schema
   * @throws TabletUnavailableException if the row is outside the tablet or the tablet is not open
   */
  public CompletableFuture<Void> apply(RowMutation rm) {
    return apply(rm, true, MutationCodec.Logged.NO_SERVER_TIME);
  }

  /**
   * {@link #apply} for a caller that must never block (an actor): instead of waiting while
   * the tablet has as many frozen memtables waiting for their flush as it may hold, it
   * returns null and applies nothing; the caller holds the write and tries again. The check
   * and the write are one step, so a flush backlog that fills meanwhile can only let the
   * writes already past it through (the active memtable grows by those, no more).
   *
   * @throws TabletUnavailableException also when the backlog is full because flushes are
   *     failing (retrying would wait forever)
   */
  public CompletableFuture<Void> tryApply(RowMutation rm) {
    return apply(rm, false, MutationCodec.Logged.NO_SERVER_TIME);
  }

  /**
   * A server time for a caller that stamps cells itself (a read-modify-write), which then
   * applies them with {@link #tryApply(RowMutation, long)}: never below one handed out before.
   */
  public long nextServerTime() {
    return serverTimes.next();
  }

  /** {@link #tryApply(RowMutation)} of cells stamped from {@code serverTime}, which the log records as taken. */
  public CompletableFuture<Void> tryApply(RowMutation rm, long serverTime) {
    return apply(rm, false, serverTime);
  }

  private CompletableFuture<Void> apply(RowMutation rm, boolean mayWait, long taken) {
    if (!containsRow(rm.row())) {
      throw new TabletUnavailableException("row " + ByteArrays.show(rm.row()) + " is outside tablet " + tabletId);
    }
    RowMutation checked = TabletMutations.checked(schema, rm);
    if (checked == null) {
      return CompletableFuture.completedFuture(null);
    }
    if (mayWait) {
      flushes.awaitFlushCapacity();
    } else if (flushes.mustWait()) {
      flushes.throwIfFlushesFail();
      return null;
    }
    // The log records the server time taken (the floor of later lives), apart from cells' timestamps;
    // a tablet that keeps its changes takes one for every write, its commit time.
    long time = taken == MutationCodec.Logged.NO_SERVER_TIME && changes.keeps() ? serverTimes.next() : taken;
    MutationCodec.Logged payload = time == MutationCodec.Logged.NO_SERVER_TIME
        ? MutationEntries.withServerTime(checked, serverTimes::next)
        : new MutationCodec.Logged(MutationEntries.withServerTime(checked, () -> time).mutation(), time);
    RowMutation resolved = payload.mutation();
    // Into the memtable now, invisible until the log has it, so the log writer's thread does
    // no insert: its callback below only takes a failed write out again, makes the sequence
    // visible, and freezes the memtable when it is full (the flush itself runs elsewhere).
    // Group commits follow each other faster that way.
    long before = current.active.approximateBytes();
    Inserted in = insert(resolved, NEW_SEQUENCE, payload.serverTime());
    long base = in.base();
    Memtable target = in.memtable();
    CompletableFuture<Void> logged = env.log().append(tabletId, base, out -> MutationCodec.encodeTo(payload, out))
        .whenComplete((ok, err) -> {
          if (err != null) {
            MutationEntries.forEach(resolved, base, (k, v) -> target.remove(k));
            target.removeChange(base);
          }
          sequence.finish(base);
          if (err == null) {
            flushes.maybeFreeze();
          }
        });
    // About what this write added (a freeze in between makes it wrong, harmlessly): it only
    // paces the node's budget checks. After the append, so the write finishes whatever happens here.
    env.memtables().grew(Math.max(0, target.approximateBytes() - before));
    return logged;
  }

  /**
   * Whether the tablet now has as many frozen memtables waiting for their flush as it may
   * hold (an observation, for tests and metrics: to write without blocking use {@link #tryApply}).
   */
  public boolean flushBacklogFull() {
    return flushes.flushBacklogFull();
  }

  /** What {@link #insert} added to: the memtable, and the first sequence. */
  private record Inserted(Memtable memtable, long base) {}

  /** {@link #insert}'s base for a new write: take the next sequences. */
  private static final long NEW_SEQUENCE = -1;

  /**
   * Adds the entries to the active memtable under sequence {@code base}, or under new ones
   * ({@link #NEW_SEQUENCE}) taken under the version lock's read side as the add is, so no freeze
   * falls between them: a memtable holds a contiguous range of sequences, which folding an
   * aggregate cell's operands relies on ({@code CompactionMerger}).
   */
  private Inserted insert(RowMutation rm, long base, long commitMicros) {
    memLock.readLock().lock();
    try {
      long b = base == NEW_SEQUENCE ? sequence.begin(rm.mutations().size()) : base;
      Memtable m = current.active;
      MutationEntries.forEach(rm, b, m::add);
      changes.written(m, b, commitMicros, rm);
      return new Inserted(m, b);
    } finally {
      memLock.readLock().unlock();
    }
  }

  /** The tablet's changes for change streams. */
  public TabletChangeLog changes() {
    return changes;
  }

  /** Waits until every write with a sequence up to {@code seq} has finished (see {@link TabletSequence}). */
  void awaitFinished(long seq) throws IOException {
    sequence.awaitFinished(seq);
  }

  /**
   * Re-applies a commit-log record during recovery. Records at or below the redo point are
   * ignored (already in SSTables); so is a record seen twice. Either way, the server time the
   * record took raises the floor of the tablet's server times ({@link ServerTimes}). The replayer
   * ends with {@link TabletSequence#replayDone} (until then a freeze keeps to the records replayed).
   */
  public void replay(long base, byte[] payload) {
    MutationCodec.Logged logged = MutationCodec.decodeLogged(ByteBuffer.wrap(payload));
    serverTimes.raise(logged.serverTime());
    RowMutation rm = logged.mutation();
    long last = base + rm.mutations().size() - 1;
    if (last <= files.redoPoint()) {
      return;
    }
    insert(rm, base, logged.serverTime() != MutationCodec.Logged.NO_SERVER_TIME ? logged.serverTime()
        : serverTimes.max());
    sequence.replayed(base, last, files.redoPoint());
    flushes.maybeFreeze();
  }

  /**
   * Throws {@link TabletUnavailableException} if this node's commit log is fenced (another
   * node serves the tablet now: docs/fencing.md). A read answers only after this passed
   * <em>after</em> its snapshot was taken: the fence did not exist then, so no other node had
   * taken a write for the tablet, and the snapshot was current at a moment within the read.
   * One look at the storage, shared with the calls that wait for it meanwhile (on HDFS a
   * look is a namenode call): {@link #scan} calls it itself, point reads leave it to their
   * callers, once per batch of reads.
   */
  public void checkNotFenced() {
    if (env.log().isFenced()) {
      throw new TabletUnavailableException("tablet " + tabletId + " is no longer served by this node: its "
          + "commit log is fenced");
    }
  }

  /** Reads one row; empty if it has no visible cell that passes the filter. */
  public Optional<Row> read(byte[] row, ReadFilter filter) throws IOException {
    if (!containsRow(row)) {
      throw new TabletUnavailableException("row " + ByteArrays.show(row) + " is outside tablet " + tabletId);
    }
    long snapshot = sequence.visible();
    TabletVersion v = acquire();
    try (RowReader r = reader(v, snapshot, row, successor(row), filter, row)) {
      return Optional.ofNullable(r.next());
    } finally {
      v.release();
    }
  }

  /**
   * A lazy scan of the rows in {@code [start, end)} intersected with the tablet's range (an
   * empty start or end is unbounded), over a snapshot taken now. The caller must close it;
   * until then it pins the files it reads. TabletUnavailableException if this node's commit
   * log is fenced ({@link #checkNotFenced}).
   */
  public RowScanner scan(byte[] start, byte[] end, ReadFilter filter) throws IOException {
    byte[] from = ByteArrays.compare(start, startRow) > 0 ? start : startRow;
    byte[] to = endRow.length == 0 ? end : end.length == 0 ? endRow
        : ByteArrays.compare(end, endRow) < 0 ? end : endRow;
    long snapshot = sequence.visible();
    TabletVersion v = acquire();
    try {
      checkNotFenced(); // after the snapshot: a scan answers only a snapshot that was current
      return new RowScanner(reader(v, snapshot, from, to, filter, null), v);
    } catch (IOException | RuntimeException e) {
      v.release();
      throw e;
    }
  }

  private static byte[] successor(byte[] row) {
    return Arrays.copyOf(row, row.length + 1);
  }

  /** A reader over the rows {@code [from, to)} of a pinned version; {@code pointRow} enables blooms. */
  private RowReader reader(TabletVersion v, long snapshot, byte[] from, byte[] to, ReadFilter filter, byte[] pointRow)
      throws IOException {
    return VersionReader.rows(v, schema, snapshot, from, to, filter, pointRow, env.clock().nowMicros(),
        env.scanCache());
  }

  TabletVersion acquire() {
    while (true) {
      TabletVersion v = current;
      if (v.tryRetain()) {
        return v;
      }
      if (v == current) {
        throw new TabletUnavailableException("tablet " + tabletId + " is closed");
      }
    }
  }

  /** The current version (replaced only through {@link #changeVersion}). */
  TabletVersion currentVersion() {
    return current;
  }

  /**
   * Replaces the current version by {@code change} of it, atomically with respect to
   * memtable adds and other changes (under the write side of the version lock, which
   * {@code change} must not leave: it takes no lock but the sequence lock); a null change
   * leaves the version as it is. Whether it changed.
   */
  boolean changeVersion(UnaryOperator<TabletVersion> change) {
    memLock.writeLock().lock();
    try {
      TabletVersion next = change.apply(current);
      if (next == null) {
        return false;
      }
      TabletVersion old = current;
      current = next;
      old.release();
      return true;
    } finally {
      memLock.writeLock().unlock();
    }
  }

  /**
   * Freezes the active memtable, whatever its size, and schedules its flush, for the node's
   * {@link MemtableBudget}; false if there was nothing to freeze or the tablet has closed.
   */
  boolean freezeForBudget() {
    return flushes.freezeAndSchedule();
  }

  /** Whether the tablet has stopped taking writes for good (closed, or closing). */
  boolean writesClosed() {
    return sequence.closed();
  }

  /** Schedules the flush of the frozen memtables, if any and none is scheduled: the budget's retry after a failed flush. */
  void retryFlush() {
    flushes.retryFrozen();
  }

  /** Freezes the memtable and flushes every frozen memtable; completes when they are in SSTables. */
  public CompletableFuture<Void> freezeAndFlush() {
    return flushes.freezeAndFlush();
  }

  /** The tablet's manifest and the changes to its files, for {@link TabletBackups}. */
  TabletFiles fileSet() {
    return files;
  }

  /**
   * Holds merging compactions (waiting for a running one to end), or releases one hold, for a
   * tablet about to split: a merge started now would only delay the split, during which writes
   * are refused, and the children merge their own files afterwards. Holds are counted: each
   * {@code true} is released by one {@code false}.
   */
  public void holdMerges(boolean hold) {
    merges.hold(hold);
  }

  /** Rewrites every SSTable of every group into one per group, dropping deletes and collectable data. */
  public CompletableFuture<Void> majorCompact() {
    return flushes.flushFrozen().thenCompose(x -> merges.mergeAll());
  }

  /**
   * Approximate bytes of this tablet's own rows: its memtables plus the SSTable blocks
   * inside its row range (SSTables shared with a sibling after a split count only for the
   * part in range). What split decisions use.
   */
  public long approximateRangeBytes() {
    return sizes().total();
  }

  /** Approximate bytes of the tablet's own rows in its memtables (active and frozen) and in its SSTables. */
  public record Sizes(long memtableBytes, long fileBytes) {
    public long total() {
      return memtableBytes + fileBytes;
    }
  }

  /** The tablet's sizes, counted as {@link #approximateRangeBytes()} counts them. */
  public Sizes sizes() {
    return TabletSizes.sizes(this);
  }

  /** A row of the tablet and the approximate bytes of the tablet's SSTable data at or before it. */
  public record RowSample(byte[] row, long offsetBytes) {}

  /**
   * Row samples from the SSTables' block indexes (no I/O), in row order, each with the
   * cumulative bytes up to it: rows that cut the tablet into pieces of roughly known size.
   * Data still in memtables is not counted; flush first for a complete picture. Rows
   * outside the tablet (in SSTables shared with a sibling after a split) are left out.
   */
  public List<RowSample> rowSamples() {
    return TabletSizes.rowSamples(this);
  }

  /**
   * A row near the middle of the tablet's SSTable data that can split it (strictly inside
   * its range), or empty if the data is too small or too uniform to cut.
   */
  public Optional<byte[]> midRow() {
    return TabletSizes.midRow(rowSamples(), startRow);
  }

  /** SSTables per locality group, newest first (for tests and operations). */
  public Map<String, List<String>> files() {
    return TabletSizes.files(this);
  }

  /**
   * Splits the tablet at {@code row} into the two named children, opened ({@link TabletSplit}).
   * This tablet is closed afterwards; if the split fails, it takes writes again.
   */
  public List<Tablet> split(byte[] row, String leftId, String rightId) throws IOException {
    return TabletSplit.split(this, row, leftId, rightId);
  }

  TabletSequence sequence() {
    return sequence;
  }

  long nextSequenceSnapshot() {
    return sequence.next();
  }

  /** Stops writes, flushes the memtable so the log is no longer needed for this tablet, and releases files. */
  @Override
  public void close() throws IOException {
    if (!sequence.closeAndDrain()) {
      return;
    }
    try {
      TabletFlushes.join(flushes.freezeAndFlush());
    } finally {
      releaseVersion();
    }
  }

  /**
   * Closes without flushing: the memtable's writes stay only in the commit log (a split, whose
   * children carry on from the log; a dropped table; tests of crash recovery). Closing again
   * does nothing. May wait for a running merging compaction to end.
   */
  public void closeWithoutFlush() {
    if (sequence.close()) {
      releaseVersion();
    }
  }

  private void releaseVersion() {
    env.memtables().unregister(this);
    merges.hold(true);
    flushes.shutdown();
    memLock.writeLock().lock();
    try {
      current.release();
    } finally {
      memLock.writeLock().unlock();
    }
  }

  @Override
  public String toString() {
    return "Tablet(" + tabletId + ", [" + ByteArrays.show(startRow) + ", " + ByteArrays.show(endRow) + "))";
  }
}
