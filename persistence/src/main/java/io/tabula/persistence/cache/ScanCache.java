package io.tabula.persistence.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The scan cache (paper §6): beside the block cache, a cache of the entries one SSTable holds
 * for one row, as the file's iterator returns them, so that a point read of the same row again
 * takes them from a map instead of finding the block, searching it and decoding them. Keyed by
 * (the reader's file id, the row); an SSTable never changes, so no write invalidates an entry,
 * and a closed file's entries are never asked for again (ids are never reused, see
 * {@link BlockCache#newFileId()}); they are dropped when the file's reader closes.
 *
 * <p>Bounded by the bytes its entries hold (their keys and values, plus a fixed overhead per
 * entry). A row whose entries in one file weigh more than {@value #MAX_ROW_BYTES} bytes is not
 * cached (a wide row would push out many narrow ones); it is remembered as such, so it is read
 * from the file without a second look. Thread-safe; two threads missing on the same row may
 * both load it, and either result is right.
 */
public final class ScanCache {
  /** The most bytes of one row in one file the cache holds. */
  public static final int MAX_ROW_BYTES = 64 * 1024;
  /** Heap bytes an entry costs beside its key and value: the references, the arrays' headers. */
  private static final int ENTRY_OVERHEAD = 48;
  /** Heap bytes a cached row costs beside its entries: the map's node, the key, the arrays. */
  private static final int ROW_OVERHEAD = 128;

  /**
   * Counters since creation: reads of a row in a file served from the cache, and those read
   * from the file (the first of a row, and every read of a row too wide to hold).
   */
  public record Stats(long hits, long misses, long weightedBytes, long rows) {}

  /** Opens a fresh iterator over the file, positioned nowhere. */
  @FunctionalInterface
  public interface Source {
    CellIterator open() throws IOException;
  }

  private record Key(long fileId, byte[] row, int hash) {
    Key(long fileId, byte[] row) {
      this(fileId, row, Long.hashCode(fileId) * 31 + Arrays.hashCode(row));
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && k.fileId == fileId && Arrays.equals(k.row, row);
    }

    @Override
    public int hashCode() {
      return hash;
    }
  }

  /** One row's entries in one file, in key order; {@code keys} null for a row too wide to hold. */
  private record Entries(CellKey[] keys, byte[][] values, int weight) {
    static final Entries TOO_WIDE = new Entries(null, null, ROW_OVERHEAD);
  }

  private final Cache<Key, Entries> cache;
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  private ScanCache(long capacityBytes) {
    this.cache = Caffeine.newBuilder().maximumWeight(capacityBytes)
        .weigher((Key k, Entries e) -> e.weight()).executor(Runnable::run).build();
  }

  /** A scan cache holding about {@code capacityBytes}; null when that is 0 (no scan cache). */
  public static ScanCache create(long capacityBytes) {
    if (capacityBytes < 0) {
      throw new IllegalArgumentException("scan cache capacity must not be negative, was " + capacityBytes);
    }
    return capacityBytes == 0 ? null : new ScanCache(capacityBytes);
  }

  /**
   * An iterator over the entries of {@code row} in the file {@code fileId}, from the cache, or
   * read through {@code source} and cached. It holds no entry of another row: use it only for
   * a read of {@code row} alone.
   */
  public CellIterator row(long fileId, byte[] row, Source source) throws IOException {
    Key key = new Key(fileId, row);
    Entries e = cache.getIfPresent(key);
    if (e != null && e.keys() == null) {
      misses.increment(); // a row too wide to hold: read from the file, as every time
      return source.open();
    }
    if (e != null) {
      hits.increment();
      return new EntriesIterator(e);
    }
    misses.increment();
    e = load(row, source);
    cache.put(key, e);
    return e.keys() == null ? source.open() : new EntriesIterator(e);
  }

  private static Entries load(byte[] row, Source source) throws IOException {
    List<CellKey> keys = new ArrayList<>();
    List<byte[]> values = new ArrayList<>();
    // The row's bytes count once: a file's cells of one row share one row array.
    int weight = ROW_OVERHEAD + row.length;
    try (CellIterator it = source.open()) {
      for (it.seek(CellKey.firstOfRow(row)); it.valid() && Arrays.equals(it.key().row(), row); it.next()) {
        byte[] v = it.value();
        weight += it.key().weight() - it.key().row().length + v.length + ENTRY_OVERHEAD;
        if (weight > MAX_ROW_BYTES) {
          return Entries.TOO_WIDE;
        }
        keys.add(it.key());
        values.add(v);
      }
    }
    return new Entries(keys.toArray(CellKey[]::new), values.toArray(byte[][]::new), weight);
  }

  /** Drops every row of file {@code fileId} (its reader was closed). Costs a pass over the cache. */
  public void invalidateFile(long fileId) {
    if (fileId != 0) {
      cache.asMap().keySet().removeIf(k -> k.fileId() == fileId);
    }
  }

  public Stats stats() {
    return new Stats(hits.sum(), misses.sum(), cache.policy().eviction().map(p -> p.weightedSize().orElse(0))
        .orElse(0L), cache.estimatedSize());
  }

  /** A cursor over one cached row's entries. Not thread-safe, as every {@link CellIterator}. */
  private static final class EntriesIterator implements CellIterator {
    private final Entries e;
    private int pos;

    EntriesIterator(Entries e) {
      this.e = e;
      this.pos = e.keys().length;
    }

    @Override
    public void seek(CellKey target) {
      int lo = 0;
      int hi = e.keys().length;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (CellKey.ORDER.compare(e.keys()[mid], target) < 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      pos = lo;
    }

    @Override
    public void seekToFirst() {
      pos = 0;
    }

    @Override
    public boolean valid() {
      return pos < e.keys().length;
    }

    @Override
    public void next() {
      pos++;
    }

    @Override
    public CellKey key() {
      return e.keys()[pos];
    }

    @Override
    public byte[] value() {
      return e.values()[pos];
    }
  }
}
