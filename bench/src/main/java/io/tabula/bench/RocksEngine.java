package io.tabula.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.RocksObject;
import org.rocksdb.Statistics;
import org.rocksdb.TickerType;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * RocksDB through its JNI binding, set up like {@link TabulaEngine}: block-based tables
 * with the same block size, a full bloom filter with the same bits per key over whole
 * keys, an LRU block cache of the same capacity holding data blocks only (index and
 * filter blocks stay in the table readers, as Tabula keeps them in its SSTable readers),
 * no compression at any level, the same memtable size, number of memtables and background
 * threads, and the write-ahead log on.
 *
 * <p>Writes go in {@link WriteBatch}es of {@link EngineConfig#writeWindow()} puts; a
 * {@link WriteMode#DURABLE durable} engine syncs the log on every batch. Not thread-safe;
 * owns every native object it creates and frees them in {@link #close()}.
 */
final class RocksEngine implements Engine {
  static {
    RocksDB.loadLibrary();
  }

  private final Deque<RocksObject> owned;
  private final RocksDB db;
  private final Statistics statistics;
  private final WriteOptions writeOptions;
  private final ReadOptions readOptions;
  private final int writeWindow;

  private RocksEngine(Deque<RocksObject> owned, RocksDB db, Statistics statistics, WriteOptions writeOptions,
      ReadOptions readOptions, int writeWindow) {
    this.owned = owned;
    this.db = db;
    this.statistics = statistics;
    this.writeOptions = writeOptions;
    this.readOptions = readOptions;
    this.writeWindow = writeWindow;
  }

  /** Opens a fresh database in the empty directory {@code dir}. */
  static RocksEngine create(Path dir, EngineConfig config, WriteMode mode) throws IOException {
    Deque<RocksObject> owned = new ArrayDeque<>();
    try {
      LRUCache cache = own(owned, new LRUCache(config.cacheBytes()));
      BloomFilter bloom = own(owned, new BloomFilter(config.bloomBitsPerKey(), false));
      BlockBasedTableConfig table = new BlockBasedTableConfig()
          .setBlockSize(config.blockSize())
          .setBlockCache(cache)
          .setFilterPolicy(bloom)
          .setWholeKeyFiltering(true)
          .setCacheIndexAndFilterBlocks(false);
      Statistics statistics = own(owned, new Statistics());
      Options options = own(owned, new Options()
          .setCreateIfMissing(true)
          .setErrorIfExists(true)
          .setWriteBufferSize(config.memtableBytes())
          .setMaxWriteBufferNumber(1 + config.frozenMemtables())
          .setMaxBackgroundJobs(config.backgroundThreads())
          .setCompressionType(CompressionType.NO_COMPRESSION)
          .setBottommostCompressionType(CompressionType.NO_COMPRESSION)
          .setStatistics(statistics)
          .setTableFormatConfig(table));
      WriteOptions writeOptions = own(owned, new WriteOptions()
          .setDisableWAL(false)
          .setSync(mode == WriteMode.DURABLE));
      ReadOptions readOptions = own(owned, new ReadOptions());
      RocksDB db = own(owned, RocksDB.open(options, dir.toString()));
      return new RocksEngine(owned, db, statistics, writeOptions, readOptions, config.writeWindow());
    } catch (RocksDBException e) {
      closeAll(owned);
      throw new IOException("cannot open RocksDB in " + dir + ": " + e.getMessage(), e);
    }
  }

  private static <T extends RocksObject> T own(Deque<RocksObject> owned, T resource) {
    owned.push(resource);
    return resource;
  }

  /** Closes in reverse order of creation: the database before the options and cache it uses. */
  private static void closeAll(Deque<RocksObject> owned) {
    while (!owned.isEmpty()) {
      owned.pop().close();
    }
  }

  @Override
  public String name() {
    return "RocksDB";
  }

  @Override
  public int write(Dataset data, int[] order, long deadlineNanos) throws IOException {
    int written = 0;
    try (WriteBatch batch = new WriteBatch()) {
      while (written < order.length && System.nanoTime() < deadlineNanos) {
        int end = Math.min(order.length, written + writeWindow);
        for (int n = written; n < end; n++) {
          int i = order[n];
          batch.put(data.key(i), data.value(i));
        }
        db.write(writeOptions, batch);
        batch.clear();
        written = end;
      }
    } catch (RocksDBException e) {
      throw new IOException("RocksDB write failed after " + written + " rows: " + e.getMessage(), e);
    }
    return written;
  }

  @Override
  public byte[] get(byte[] key) throws IOException {
    try {
      return db.get(readOptions, key);
    } catch (RocksDBException e) {
      throw new IOException("RocksDB get failed: " + e.getMessage(), e);
    }
  }

  @Override
  public ScanTally scan(long deadlineNanos) throws IOException {
    long rows = 0;
    long bytes = 0;
    try (RocksIterator it = db.newIterator(readOptions)) {
      for (it.seekToFirst(); it.isValid(); it.next()) {
        bytes += it.key().length + it.value().length;
        rows++;
        if ((rows & 1023) == 0 && System.nanoTime() >= deadlineNanos) {
          break;
        }
      }
      it.status();
    } catch (RocksDBException e) {
      throw new IOException("RocksDB scan failed after " + rows + " rows: " + e.getMessage(), e);
    }
    return new ScanTally(rows, bytes);
  }

  @Override
  public void flushAndCompact() throws IOException {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
      db.compactRange();
    } catch (RocksDBException e) {
      throw new IOException("RocksDB flush or compaction failed: " + e.getMessage(), e);
    }
  }

  @Override
  public CacheCounters cacheCounters() {
    return new CacheCounters(statistics.getTickerCount(TickerType.BLOCK_CACHE_DATA_HIT),
        statistics.getTickerCount(TickerType.BLOCK_CACHE_DATA_MISS));
  }

  /** Live SST files, for the report. */
  int fileCount() {
    return db.getLiveFilesMetaData().size();
  }

  @Override
  public void close() {
    closeAll(owned);
  }
}
