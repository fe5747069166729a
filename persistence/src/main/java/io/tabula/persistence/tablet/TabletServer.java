package io.tabula.persistence.tablet;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.cache.ScanCache;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.RootMismatchException;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.wal.CommitLog;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.LogLostException;
import io.tabula.persistence.wal.LogPieces;
import io.tabula.persistence.wal.ReplayResult;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The storage side of one tablet server (paper §5.3, §6): the node's commit log, block
 * cache and compaction threads, and the tablets open on it. Opening it recovers: every
 * tablet with a manifest under {@code tables/} is opened, a split that was recorded but
 * not finished is finished, and the log is replayed into the tablets past their redo
 * points.
 *
 * <p>It remembers the identity of the storage root it started on ({@link RootIdentity}) and
 * reads the root's identity again before it opens a tablet: on a root that is not that one
 * (another machine's disk, a file system mounted over the data directory) a tablet's files
 * are simply absent, and opening it would serve it empty. A tablet without a manifest is
 * created only when its caller says it never held data ({@link IfNoManifest}).
 *
 * <p>Thread-safe. Owns the log, the cache, the executor and the tablets; {@link #close()}
 * flushes every tablet and closes them all.
 */
public final class TabletServer implements Closeable {
  /**
   * @param nodeId names the node's commit-log folder, {@code logs/<nodeId>}
   * @param blockCacheBytes capacity of the shared block cache
   * @param backgroundThreads threads for flushes and compactions
   * @param memtableBytes what all the tablets' memtables may hold together ({@link MemtableBudget})
   */
  public record Options(String nodeId, long blockCacheBytes, int backgroundThreads, CommitLogOptions log,
      TabletOptions tablets, long memtableBytes, long scanCacheBytes) {
    /** Options without a scan cache. */
    public Options(String nodeId, long blockCacheBytes, int backgroundThreads, CommitLogOptions log,
        TabletOptions tablets, long memtableBytes) {
      this(nodeId, blockCacheBytes, backgroundThreads, log, tablets, memtableBytes, 0);
    }

    /** These options with a scan cache of {@code bytes} (0 for none). */
    public Options withScanCache(long bytes) {
      return new Options(nodeId, blockCacheBytes, backgroundThreads, log, tablets, memtableBytes, bytes);
    }

    /** The share of the heap the memtables may hold when no budget is given. */
    public static final double DEFAULT_MEMTABLE_HEAP_PERCENT = 40;

    /** Options whose memtables may hold {@value #DEFAULT_MEMTABLE_HEAP_PERCENT}% of the heap. */
    public Options(String nodeId, long blockCacheBytes, int backgroundThreads, CommitLogOptions log,
        TabletOptions tablets) {
      this(nodeId, blockCacheBytes, backgroundThreads, log, tablets,
          MemtableBudget.heapShare(DEFAULT_MEMTABLE_HEAP_PERCENT));
    }

    public static Options defaults(String nodeId) {
      return new Options(nodeId, 64L << 20, 2, CommitLogOptions.defaults(), TabletOptions.defaults());
    }
  }

  private final Storage storage;
  /** The identity the storage root had when this server started; null if it had none (a root made before them). */
  private final UUID rootId;
  private final Function<String, TableSchema> schemas;
  private final CommitLog log;
  private final ExecutorService background;
  private final ExecutorService merges;
  private final TabletEnv env;
  private final Map<String, Tablet> tablets = new ConcurrentHashMap<>();
  /** Set once {@link #abandon} began: no tablet is closed cleanly after that. */
  private volatile boolean abandoned;
  /**
   * Tablets whose close failed (their flush did not finish), to the redo point they had: their
   * writes since are only in this server's commit log, which its next owner replays, so the
   * log's segments holding them stay (see {@link #deleteObsoleteLogSegments}).
   */
  private final Map<String, Long> closedUnflushed = new ConcurrentHashMap<>();
  /** The name of this server's commit-log folder under {@code logs/}. */
  private final String logName;
  /**
   * Opens tablets only when asked ({@link #openTablet}), as a cluster node does; otherwise
   * {@link #open} opened every tablet on the storage and split children stay open here.
   */
  private final boolean onDemand;
  private ReplayResult recovery;

  private TabletServer(Storage storage, UUID rootId, Options options, MicrosClock clock,
      Function<String, TableSchema> schemas, CommitLog log, BackgroundFailures failures, boolean onDemand) {
    this.storage = storage;
    this.rootId = rootId;
    this.schemas = schemas;
    this.log = log;
    this.logName = options.nodeId();
    this.onDemand = onDemand;
    this.background = daemonPool(options.backgroundThreads(), "tabula-compaction-");
    this.merges = daemonPool(Math.max(1, options.backgroundThreads() / 2), "tabula-merge-");
    this.env = new TabletEnv(storage, log, BlockCache.create(options.blockCacheBytes()),
        new MemtableBudget(options.memtableBytes()), background, merges, clock, options.tablets(),
        this::deleteObsoleteLogSegments, failures, new EngineStats(), ScanCache.create(options.scanCacheBytes()));
  }

  /**
   * Opens the node and recovers its tablets.
   *
   * @param schemas the schema of a table by name (the master's metadata)
   */
  public static TabletServer open(Storage storage, Options options, MicrosClock clock,
      Function<String, TableSchema> schemas) throws IOException {
    return open(storage, options, clock, schemas, BackgroundFailures.systemLogger());
  }

  /**
   * Opens the node and recovers its tablets, reporting the failures of background work to
   * {@code failures}.
   *
   * @param schemas the schema of a table by name (the master's metadata)
   */
  public static TabletServer open(Storage storage, Options options, MicrosClock clock,
      Function<String, TableSchema> schemas, BackgroundFailures failures) throws IOException {
    UUID rootId = RootIdentity.read(storage).orElse(null);
    CommitLog log = CommitLog.open(storage, Storage.path("logs", options.nodeId()), options.log(), failures::report);
    TabletServer server = new TabletServer(storage, rootId, options, clock, schemas, log, failures, false);
    try {
      server.recover();
    } catch (IOException | RuntimeException e) {
      server.abandon();
      throw e;
    }
    return server;
  }

  /**
   * Starts the storage side of a cluster node: a new commit log in {@code logs/<nodeId>},
   * which must not exist yet (a restarted node takes a new name, so it never appends to the
   * log of its previous life), and no tablet open: the node opens each tablet it is given
   * with {@link #openTablet}. A cluster node's root has an identity ({@link
   * RootIdentity#establish}) before this: every open is checked against it.
   *
   * @param schemas the schema of a table by name (the master's metadata)
   */
  public static TabletServer startOnDemand(Storage storage, Options options, MicrosClock clock,
      Function<String, TableSchema> schemas, BackgroundFailures failures) throws IOException {
    String dir = Storage.path("logs", options.nodeId());
    if (!storage.list(dir).isEmpty()) {
      throw new IllegalStateException("commit-log folder " + dir + " already exists: a node's log folder is never "
          + "reused");
    }
    UUID rootId = RootIdentity.read(storage).orElse(null);
    return new TabletServer(storage, rootId, options, clock, schemas, CommitLog.open(storage, dir, options.log(),
        failures::report), failures, true);
  }

  /** A tablet this server opened, and what it replayed from the logs it was given to open it. */
  public record Opened(Tablet tablet, long replayedRecords, List<String> recoveredLogs) {}

  /** What {@link #openTablet} does with a tablet that has no manifest. */
  public enum IfNoManifest {
    /**
     * Creates it, empty: whoever places the tablet knows it never held data (in a cluster, the
     * master's directory records no file of it and names no log that may hold its writes).
     */
    CREATE,
    /** Fails with {@link TabletMissingException}: the tablet held data, and this root does not have it. */
    FAIL
  }

  /**
   * {@link #openTablet(String, String, byte[], byte[], Collection, IfNoManifest)} creating a
   * tablet that has no manifest: for a caller that knows every tablet it opens without one is
   * new (a single process, a test). A cluster node asks its master's directory instead.
   */
  public Opened openTablet(String table, String tabletId, byte[] startRow, byte[] endRow, Collection<String> logs)
      throws IOException {
    return openTablet(table, tabletId, startRow, endRow, logs, IfNoManifest.CREATE);
  }

  /**
   * Opens tablet {@code tabletId} of {@code table} from its manifest (if it has none: creating
   * it, empty, over {@code [startRow, endRow)}, or failing, as {@code ifNoManifest} says), then
   * replays its records past its redo point from each of {@code logs} other than this server's
   * own: the logs of earlier incarnations that served it without closing it cleanly. If
   * anything was replayed the tablet flushes before this returns, so those logs are no longer
   * needed for it (they are the {@link Opened#recoveredLogs}). Returns the tablet already open
   * if there is one; null if the tablet was split (any child manifest a crash left unwritten is
   * written first). Blocks on file I/O.
   *
   * @param logs names of folders under {@code logs/} ({@code "n1.a"}), not paths
   * @throws InvalidLogNameException if one of {@code logs} is not a folder's name (before
   *     anything is opened)
   * @throws RootMismatchException if the storage root's identity is not the one this server
   *     started with (or it has none now): nothing is read or written
   * @throws TabletMissingException if the tablet has no manifest and {@code ifNoManifest} is
   *     {@link IfNoManifest#FAIL}: nothing is written
   */
  public Opened openTablet(String table, String tabletId, byte[] startRow, byte[] endRow, Collection<String> logs,
      IfNoManifest ifNoManifest) throws IOException {
    logs.forEach(name -> InvalidLogNameException.check("logs", name));
    Tablet open = tablets.get(tabletId);
    if (open != null) {
      return new Opened(open, 0, List.of());
    }
    if (rootId != null) {
      RootIdentity.check(storage, storage.toString(), rootId, "tablet " + tabletId + " of table " + table
          + " is not opened");
    }
    // A tablet whose close failed here has its writes since its last flush in this server's own
    // log: it replays that too (its sealed segments, and the live one up to what is written).
    boolean pinned = closedUnflushed.containsKey(tabletId);
    String dir = Tablet.dirOf(table, tabletId);
    if (!ManifestCodec.exists(storage, dir)) {
      if (ifNoManifest == IfNoManifest.FAIL) {
        throw new TabletMissingException(table, tabletId, dir, storage.toString());
      }
      return new Opened(createTablet(table, tabletId, startRow, endRow), 0, List.of());
    }
    ManifestCodec.Versioned claimed = ManifestCodec.claim(storage, dir);
    TabletManifest m = claimed.manifest();
    if (m.state() != TabletManifest.State.ACTIVE) {
      finishSplit(m, new ArrayList<>());
      return null;
    }
    Tablet t = Tablet.open(env, schemaOf(table), claimed);
    long replayed = 0;
    List<String> recovered = new ArrayList<>();
    try {
      for (String other : logs) {
        if (other.equals(logName)) {
          continue;
        }
        replayed += LogPieces.replay(storage, Storage.path("logs", other), tabletId, (id, seq, payload) ->
            t.replay(seq, payload), env.failures()::report);
        recovered.add(other);
      }
      if (pinned) {
        replayed += LogPieces.replay(storage, Storage.path("logs", logName), tabletId, (id, seq, payload) ->
            t.replay(seq, payload), env.failures()::report);
      }
      t.sequence().replayDone(); // memtables frozen from now on move the redo point
      if (t.visibleSequence() > t.redoPoint()) {
        TabletFlushes.join(t.freezeAndFlush());
      }
    } catch (IOException | RuntimeException e) {
      t.closeWithoutFlush();
      throw e;
    }
    if (tablets.putIfAbsent(tabletId, t) != null) {
      t.closeWithoutFlush();
      return new Opened(tablets.get(tabletId), 0, List.of());
    }
    if (pinned) {
      closedUnflushed.remove(tabletId); // its writes are in its files now, or its open memtable
    }
    return new Opened(t, replayed, recovered);
  }

  /**
   * Closes an open tablet cleanly (paper §5.2, a tablet handed to another server): stops its
   * writes, waits for those in flight, flushes its memtable, so whoever opens it next has
   * nothing to replay. Nothing happens if it is not open. Blocks on file I/O.
   *
   * @throws TabletUnavailableException if this server was {@linkplain #abandon abandoned} or its
   *     commit log is lost: the tablet's writes since its last flush are then only in the log,
   *     so it was not closed cleanly, and the log must still be replayed by its next owner
   *     (whoever reported a clean close now would let the master forget that log).
   */
  public void closeTablet(String tabletId) throws IOException {
    if (abandoned || log.isLost()) {
      Tablet t = tablets.remove(tabletId);
      if (t != null) {
        t.closeWithoutFlush();
      }
      throw new TabletUnavailableException("tablet " + tabletId + " was not closed cleanly: this server stopped "
          + "without flushing (its commit log is lost), so its writes are in the log for its next owner to replay");
    }
    Tablet t = tablets.get(tabletId);
    if (t == null) {
      return;
    }
    // Pinned before it leaves the open tablets, so no segment holding its writes is deleted
    // while its flush runs; unpinned once that flush is done.
    closedUnflushed.put(tabletId, t.redoPoint());
    tablets.remove(tabletId, t);
    t.close();
    closedUnflushed.remove(tabletId);
  }

  /**
   * Writes the manifest of tablet {@code childId}, the merge of the adjacent tablets
   * {@code leftId} and {@code rightId} of {@code table} ({@link MergedManifests}). Both parents
   * must be closed cleanly here and stay closed. Blocks on file I/O.
   *
   * @return the child's manifest
   */
  public TabletManifest writeMergedManifest(String table, String leftId, String rightId, String childId)
      throws IOException {
    return MergedManifests.write(this, storage, table, leftId, rightId, childId);
  }

  /**
   * Closes an open tablet without flushing because this node may not serve it now (the master
   * refused its opening): its writes since its last flush stay in this server's log, whose
   * segments holding them are kept (as after a close that failed), for its next opening here
   * or for its next owner, which replays this log.
   */
  public void giveUpTablet(String tabletId) {
    Tablet t = tablets.get(tabletId);
    if (t == null) {
      return;
    }
    closedUnflushed.put(tabletId, t.redoPoint());
    tablets.remove(tabletId, t);
    t.closeWithoutFlush();
  }

  /** Closes an open tablet without flushing, its data being thrown away (its table is gone). */
  public void discardTablet(String tabletId) {
    Tablet t = tablets.remove(tabletId);
    if (t != null) {
      t.closeWithoutFlush();
    }
  }

  /** The name of this server's commit-log folder under {@code logs/}. */
  public String logName() {
    return logName;
  }

  private void recover() throws IOException {
    List<ManifestCodec.Versioned> active = new ArrayList<>();
    for (String table : storage.list("tables")) {
      for (String id : storage.list(Storage.path("tables", table))) {
        String dir = Tablet.dirOf(table, id);
        if (!ManifestCodec.exists(storage, dir)) {
          continue;
        }
        TabletManifest m = ManifestCodec.read(storage, dir);
        if (m.state() == TabletManifest.State.ACTIVE) {
          active.add(ManifestCodec.claim(storage, dir));
        } else {
          finishSplit(m, active);
        }
      }
    }
    for (ManifestCodec.Versioned v : active) {
      if (!tablets.containsKey(v.manifest().tabletId())) {
        tablets.put(v.manifest().tabletId(), Tablet.open(env, schemaOf(v.manifest().table()), v));
      }
    }
    recovery = log.replay((id, seq, payload) -> {
      Tablet t = tablets.get(id);
      if (t != null) {
        t.replay(seq, payload);
      }
    });
    tablets.values().forEach(t -> t.sequence().replayDone());
  }

  /** A split recorded in the parent's manifest: write any child manifest the crash left unwritten. */
  private void finishSplit(TabletManifest parent, List<ManifestCodec.Versioned> active) throws IOException {
    for (TabletManifest c : parent.children()) {
      String dir = Tablet.dirOf(c.table(), c.tabletId());
      if (!ManifestCodec.exists(storage, dir)) {
        ManifestCodec.Versioned v = ManifestCodec.create(storage, dir, c);
        if (v.manifest().state() == TabletManifest.State.ACTIVE) {
          active.add(v);
        }
      }
    }
  }

  /** Whether table {@code table}'s tablets keep their changes now (its schema has a change retention). */
  boolean keepsChanges(String table) {
    return schemaOf(table).changeRetentionMicros() > 0;
  }

  private TableSchema schemaOf(String table) {
    TableSchema s = schemas.apply(table);
    if (s == null) {
      throw new IllegalStateException("no schema known for table " + table);
    }
    return s;
  }

  /** What replaying the commit log found when the node opened (a torn tail, if any). */
  public ReplayResult recovery() {
    return recovery;
  }

  public Tablet createTablet(String table, String tabletId, byte[] startRow, byte[] endRow) throws IOException {
    if (tablets.containsKey(tabletId)) {
      throw new IllegalStateException("tablet " + tabletId + " is already open on this node");
    }
    Tablet t = Tablet.create(env, schemaOf(table), table, tabletId, startRow, endRow);
    tablets.put(tabletId, t);
    return t;
  }

  /** The open tablet with this id, or null. */
  public Tablet tablet(String tabletId) {
    return tablets.get(tabletId);
  }

  public List<Tablet> tablets() {
    return List.copyOf(tablets.values());
  }

  /** Splits an open tablet; the children replace it on this node. */
  public List<Tablet> split(String tabletId, byte[] row, String leftId, String rightId) throws IOException {
    Tablet t = tablets.get(tabletId);
    if (t == null) {
      throw new IllegalArgumentException("tablet " + tabletId + " is not open on this node");
    }
    List<Tablet> children = t.split(row, leftId, rightId);
    tablets.remove(tabletId);
    if (onDemand) {
      // Each child is opened where it is placed next, perhaps on another node; their manifests
      // say everything (the split flushed the parent).
      children.forEach(Tablet::closeWithoutFlush);
    } else {
      children.forEach(c -> tablets.put(c.id(), c));
    }
    return children;
  }

  /**
   * Closes a deleted table's open tablets on this node without flushing (their data is being
   * thrown away). Its files are left for the master's sweep ({@link FileSweeper}), which alone
   * deletes them: a node whose view of the directory lags could otherwise delete the files of a
   * table re-created under the same name. Log records of its tablets are skipped by later
   * replays, as they belong to no open tablet.
   */
  public void closeTable(String table) {
    for (Tablet t : List.copyOf(tablets.values())) {
      if (t.table().equals(table)) {
        tablets.remove(t.id());
        t.closeWithoutFlush();
      }
    }
  }

  public TabletEnv env() {
    return env;
  }

  /** Bytes of SSTables read whole into memory (the files of in-memory locality groups) by the open tablets. */
  public long inMemoryBytes() {
    long n = 0;
    for (Tablet t : tablets.values()) {
      for (List<SSTableHandle> group : t.currentVersion().files.values()) {
        for (SSTableHandle h : group) {
          n += h.reader().inMemory() ? h.reader().info().fileBytes() : 0;
        }
      }
    }
    return n;
  }

  private void deleteObsoleteLogSegments() {
    try {
      // A tablet not open here was closed cleanly (flushed), split (flushed first), dropped
      // with its table, or never opened here: its records are obsolete, unless its close failed.
      // Abandoned (set before the tablets are cleared): a crash deletes nothing, so a flush that
      // ends afterwards must not find every segment obsolete for want of its tablet.
      log.deleteObsoleteSegments(id -> {
        Tablet t = tablets.get(id);
        return t != null ? t.redoPoint() : abandoned ? -1 : closedUnflushed.getOrDefault(id, Long.MAX_VALUE);
      });
    } catch (IOException e) {
      // Old segments stay until the next flush tries again; nothing is lost by keeping them.
      env.failures().report("deleting commit-log segments no tablet needs", e);
    }
  }

  /**
   * Completes, with why, once the commit log acknowledges nothing more: its folder fenced (the
   * tablets recovered elsewhere: docs/fencing.md) or an fsync failed. Then {@link #abandon}.
   */
  public CompletableFuture<LogLostException> whenLogLost() {
    return log.whenLost();
  }

  /** Whether the commit log acknowledges nothing more ({@link #whenLogLost}), or its folder is fenced now. */
  public boolean isLogLost() {
    return log.isLost();
  }

  /** Whether this server was {@linkplain #abandon abandoned}: its tablets dropped without a flush. */
  public boolean isAbandoned() {
    return abandoned;
  }

  /** Whether the commit log's folder is fenced. */
  public boolean isFenced() {
    return log.isFenced();
  }

  /**
   * Flushes and closes every tablet, then the log and the threads; if the log is lost
   * (fenced, or an fsync failed), {@link #abandon}s them instead: another node recovers them
   * from the log, and a flush here would change files that node owns, or will.
   */
  @Override
  public void close() throws IOException {
    if (abandoned) {
      return;
    }
    if (log.isLost()) {
      abandon();
      return;
    }
    IOException first = null;
    for (Tablet t : tablets.values()) {
      try {
        t.close();
      } catch (IOException e) {
        first = first == null ? e : first;
      }
    }
    tablets.clear();
    try {
      log.close();
    } catch (IOException e) {
      first = first == null ? e : first;
    }
    background.shutdown();
    merges.shutdown();
    if (first != null) {
      throw first;
    }
  }

  /**
   * Stops the node's threads without flushing or syncing anything, leaving the files as
   * they are: what a crash does (used by crash-recovery tests, after the storage has
   * "lost power"), and what a fenced node does. Idempotent.
   */
  public void abandon() {
    abandoned = true;
    for (Tablet t : tablets.values()) {
      t.closeWithoutFlush();
    }
    tablets.clear();
    background.shutdownNow();
    merges.shutdownNow();
    try {
      background.awaitTermination(5, TimeUnit.SECONDS);
      merges.awaitTermination(5, TimeUnit.SECONDS);
      log.close();
    } catch (IOException e) {
      // The files are gone or dead by design: a crash does not get to close them cleanly.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A fixed pool of daemon threads named {@code prefix} and a number from 1. */
  private static ExecutorService daemonPool(int threads, String prefix) {
    AtomicInteger n = new AtomicInteger();
    return Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }
}
