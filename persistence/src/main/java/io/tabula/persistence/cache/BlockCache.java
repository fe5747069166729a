package io.tabula.persistence.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.stats.CacheStats;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's block cache (paper §6), shared by every tablet: decompressed, parsed blocks of
 * SSTables, keyed by (file id, block offset) and bounded by the bytes they hold.
 *
 * <p>Contract:
 *
 * <ol>
 *   <li>Each open SSTable reader takes a fresh id from {@link #newFileId()}; ids are never
 *       reused, so a block of a closed or deleted file can never be served for another.
 *   <li>A value's weight is its {@link Weighed#weightBytes()}, fixed once cached; the sum
 *       of weights stays near {@code capacityBytes} (Caffeine's W-TinyLFU decides what to
 *       evict). A value heavier than the whole capacity is dropped at once.
 *   <li>Loads run outside any lock: two threads missing on the same block may both load
 *       it, and the second result replaces the first. Blocks are immutable, so either is
 *       right.
 * </ol>
 *
 * <p>Thread-safe. Eviction work runs on the calling thread, so statistics are exact when a
 * call returns.
 */
public final class BlockCache {
  /** What the cache holds: an immutable value that knows its size. */
  public interface Weighed {
    /** Approximate heap bytes held, at least 1. */
    int weightBytes();
  }

  /** Reads a block that is not cached. */
  @FunctionalInterface
  public interface Loader<B extends Weighed> {
    B load() throws IOException;
  }

  /** Counters since creation, for benchmarks and metrics. */
  public record Stats(long hits, long misses, long evictions, long weightedBytes, long entries) {
    public double hitRate() {
      long total = hits + misses;
      return total == 0 ? 0 : (double) hits / total;
    }
  }

  private record Key(long fileId, long offset) {}

  private final long capacityBytes;
  private final Cache<Key, Weighed> cache;
  private final AtomicLong nextFileId = new AtomicLong(1);

  private BlockCache(long capacityBytes) {
    this.capacityBytes = capacityBytes;
    this.cache = Caffeine.newBuilder()
        .maximumWeight(capacityBytes)
        .weigher((Key k, Weighed v) -> Math.max(1, v.weightBytes()))
        .executor(Runnable::run)
        .recordStats()
        .build();
  }

  /**
   * A cache holding at most about {@code capacityBytes} of blocks.
   *
   * @throws IllegalArgumentException if the capacity is negative
   */
  public static BlockCache create(long capacityBytes) {
    if (capacityBytes < 0) {
      throw new IllegalArgumentException("block cache capacity is " + capacityBytes + " bytes; must be >= 0");
    }
    return new BlockCache(capacityBytes);
  }

  public long capacityBytes() {
    return capacityBytes;
  }

  /** A new id for an opened file, never returned before by this cache. */
  public long newFileId() {
    return nextFileId.getAndIncrement();
  }

  /**
   * The block of {@code fileId} at {@code offset}: from the cache, else from {@code loader}
   * (then cached).
   *
   * @throws ClassCastException if the block cached there is not a {@code type}
   * @throws IOException what the loader throws; nothing is cached then
   */
  public <B extends Weighed> B get(long fileId, long offset, Class<B> type, Loader<B> loader) throws IOException {
    Key key = new Key(fileId, offset);
    Weighed cached = cache.getIfPresent(key);
    if (cached != null) {
      return type.cast(cached);
    }
    B loaded = Objects.requireNonNull(loader.load(), "loader returned null");
    cache.put(key, loaded);
    return loaded;
  }

  /** The cached block, or null; counts as a hit or a miss. */
  public <B extends Weighed> B getIfPresent(long fileId, long offset, Class<B> type) {
    return type.cast(cache.getIfPresent(new Key(fileId, offset)));
  }

  /** Drops every block of {@code fileId} (its reader was closed). Costs a pass over the cache. */
  public void invalidateFile(long fileId) {
    cache.asMap().keySet().removeIf(k -> k.fileId() == fileId);
  }

  public void invalidateAll() {
    cache.invalidateAll();
  }

  public Stats stats() {
    cache.cleanUp();
    CacheStats s = cache.stats();
    long weight = cache.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    return new Stats(s.hitCount(), s.missCount(), s.evictionCount(), weight, cache.estimatedSize());
  }
}
