package io.tabula.bench;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.Compression;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.tablet.MicrosClock;
import io.tabula.persistence.tablet.RowScanner;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletOptions;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The Tabula engine as a benchmark drives it: one {@link TabletServer} on a {@link Storage}
 * (local files, or HDFS), one table with one tablet covering every row, one family {@code f} in the
 * default locality group, which gets the configured block size, no compression and the
 * configured bloom bits. Each row is one cell {@code f:v} at a fixed timestamp.
 *
 * <p>Writes keep up to {@link EngineConfig#writeWindow()} {@link Tablet#apply} futures
 * outstanding, so that many writes can share one commit-log sync (group commit). Not
 * thread-safe; owns the server and closes it.
 */
final class TabulaEngine implements Engine {
  static final String TABLE = "bench";
  static final String FAMILY = "f";
  private static final byte[] QUALIFIER = {'v'};
  private static final long TIMESTAMP_MICROS = 1_000_000L;
  private static final long LOG_SEGMENT_BYTES = 64L << 20;
  private static final byte[] UNBOUNDED = new byte[0];

  private final Storage storage;
  private final TabletServer server;
  private final Tablet tablet;
  private final int writeWindow;
  private final boolean preparedLog;

  private TabulaEngine(Storage storage, TabletServer server, Tablet tablet, int writeWindow, boolean preparedLog) {
    this.storage = storage;
    this.server = server;
    this.tablet = tablet;
    this.writeWindow = writeWindow;
    this.preparedLog = preparedLog;
  }

  /**
   * Opens a fresh engine on {@code storage}, an empty root, with a scan cache of {@code scanCacheBytes} (0: none),
   * its commit log writing over prepared segments or appending to plain ones.
   */
  static TabulaEngine create(Storage storage, EngineConfig config, WriteMode mode, long scanCacheBytes,
      boolean preparedLog) throws IOException {
    TableSchema schema = schema(config);
    Durability durability = mode == WriteMode.DURABLE ? Durability.FSYNC : Durability.OS_BUFFERED;
    TabletOptions tablets = new TabletOptions(config.memtableBytes(), TabletOptions.defaults().maxFilesPerGroup(),
        config.frozenMemtables());
    TabletServer.Options options = new TabletServer.Options("bench", config.cacheBytes(),
        config.backgroundThreads(), new CommitLogOptions(LOG_SEGMENT_BYTES, durability, preparedLog), tablets)
        .withScanCache(scanCacheBytes);
    TabletServer server = TabletServer.open(storage, options, MicrosClock.SYSTEM,
        table -> TABLE.equals(table) ? schema : null);
    try {
      Tablet tablet = server.createTablet(TABLE, "t0", UNBOUNDED, UNBOUNDED);
      return new TabulaEngine(storage, server, tablet, config.writeWindow(), preparedLog);
    } catch (IOException | RuntimeException e) {
      server.abandon();
      throw e;
    }
  }

  /** One family in the default group, the group set up as the configuration says. */
  static TableSchema schema(EngineConfig config) {
    LocalityGroup group = new LocalityGroup(LocalityGroup.DEFAULT_NAME, config.blockSize(), Compression.NONE,
        config.bloomBitsPerKey(), false);
    ColumnFamily family = new ColumnFamily(FAMILY, GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME);
    return TableSchema.of(List.of(family), List.of(group));
  }

  @Override
  public String name() {
    return (server.env().scanCache() == null ? "Tabula" : "Tabula + scan cache") + (preparedLog ? "" : ", plain log");
  }

  @Override
  public int write(Dataset data, int[] order, long deadlineNanos) throws IOException {
    ArrayDeque<CompletableFuture<Void>> outstanding = new ArrayDeque<>(writeWindow);
    int written = 0;
    while (written < order.length && (written % writeWindow != 0 || System.nanoTime() < deadlineNanos)) {
      if (outstanding.size() == writeWindow) {
        await(outstanding.removeFirst());
      }
      int i = order[written];
      RowMutation rm = RowMutation.of(data.key(i), new Mutation.SetCell(FAMILY, QUALIFIER, TIMESTAMP_MICROS,
          data.value(i)));
      outstanding.addLast(tablet.apply(rm));
      written++;
    }
    while (!outstanding.isEmpty()) {
      await(outstanding.removeFirst());
    }
    return written;
  }

  private static void await(CompletableFuture<Void> f) throws IOException {
    try {
      f.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof UncheckedIOException u) {
        throw u.getCause();
      }
      throw e;
    }
  }

  @Override
  public byte[] get(byte[] key) throws IOException {
    Optional<Row> row = tablet.read(key, ReadFilter.all());
    return row.map(r -> r.cells().get(0).value()).orElse(null);
  }

  @Override
  public ScanTally scan(long deadlineNanos) throws IOException {
    long rows = 0;
    long bytes = 0;
    try (RowScanner s = tablet.scan(UNBOUNDED, UNBOUNDED, ReadFilter.all())) {
      for (Row r = s.next(); r != null; r = s.next()) {
        bytes += r.key().length;
        for (Cell c : r.cells()) {
          bytes += c.value().length;
        }
        rows++;
        if ((rows & 1023) == 0 && System.nanoTime() >= deadlineNanos) {
          break;
        }
      }
    }
    return new ScanTally(rows, bytes);
  }

  @Override
  public void flushAndCompact() throws IOException {
    await(tablet.freezeAndFlush());
    await(tablet.majorCompact());
  }

  @Override
  public CacheCounters cacheCounters() {
    BlockCache.Stats s = server.env().cache().stats();
    return new CacheCounters(s.hits(), s.misses());
  }

  /** SSTables per locality group, for the report. */
  int fileCount() {
    return tablet.files().values().stream().mapToInt(List::size).sum();
  }

  @Override
  public void close() throws IOException {
    server.close();
    if (storage instanceof java.io.Closeable c) {
      c.close();
    }
  }
}
