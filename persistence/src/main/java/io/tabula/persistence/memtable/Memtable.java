package io.tabula.persistence.memtable;

import io.tabula.persistence.changes.Change;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import java.util.Arrays;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The in-memory buffer of recent writes (paper §5.3): a sorted map from {@link CellKey} to
 * value, a {@link CellTree}, whose values are kept in large chunks ({@link ValueSlab}).
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>Entries are never replaced; the same key added twice (a log record replayed over data
 *       already here) keeps one entry with the same value. Entries are removed only for a
 *       write the log failed, before any reader could see them.
 *   <li>{@link #approximateBytes()} counts each entry's key weight plus value length.
 *   <li>Readers see a consistent view only through sequence numbers: an iterator may or may
 *       not see entries added after it was created, so callers filter by a snapshot sequence.
 * </ol>
 *
 * Thread-safe: writers take turns, iterators never wait.
 */
public final class Memtable {
  private final CellTree tree = new CellTree();
  /** Where values are copied; null keeps each value in its own array. */
  private final ValueSlab slab;

  /** A memtable whose values are copied into chunks ({@link ValueSlab}). */
  public Memtable() {
    this(true);
  }

  public Memtable(boolean valueSlabs) {
    this.slab = valueSlabs ? new ValueSlab() : null;
  }
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong maxSequence = new AtomicLong(-1);
  /** The changes for a change stream, by sequence; made at the first (most tables keep none). */
  private volatile ConcurrentSkipListMap<Long, Change> changes;
  /**
   * A small Bloom filter of the rows added (two bits per row), so a point read skips seeking a
   * memtable that cannot hold its row: the seek into a large sorted structure was a tenth of a
   * point read's CPU (measured on the skip list the memtable had before {@link CellTree}). Bits
   * are set before the entry becomes visible (see {@link #add}), so a reader never misses a row
   * it may see. In two layers, each made when first needed: {@link #smallBits}
   * ({@value #SMALL_BITS} bits, 256 bytes) at the first add, and {@link #largeBits}
   * ({@value #LARGE_BITS} bits, 32 KiB) once {@value #SMALL_ROWS} rows (not cells) were marked
   * in the small one; a row is marked in the newest and looked for in both. A node holds thousands of
   * memtables nobody writes to, one per idle tablet, and may hold a hundred thousand that took
   * a write or two (a bulk load of a pre-split table): 32 KiB each at the first add was 3.2 GB.
   */
  private final java.util.concurrent.atomic.AtomicReference<AtomicLongArray> smallBits =
      new java.util.concurrent.atomic.AtomicReference<>();
  private final java.util.concurrent.atomic.AtomicReference<AtomicLongArray> largeBits =
      new java.util.concurrent.atomic.AtomicReference<>();
  /** How many rows were marked in the small layer (a row added twice counts twice). */
  private final java.util.concurrent.atomic.AtomicInteger smallMarked = new java.util.concurrent.atomic.AtomicInteger();
  private static final int SMALL_BITS = 1 << 11;
  private static final int LARGE_BITS = 1 << 18;
  /** Rows marked in the small layer before the large one is made (a false positive rate of 0.4% there). */
  private static final int SMALL_ROWS = 64;

  public void add(CellKey key, byte[] value) {
    markRow(key.row());
    if (tree.put(key, slab != null ? slab.copy(value) : new ValueSlab.Slice(value, 0, value.length))) {
      bytes.addAndGet(key.weight() + value.length);
      maxSequence.accumulateAndGet(key.sequence(), Math::max);
    }
  }

  /**
   * Takes out an entry of a write the commit log failed. Only for entries whose sequence is
   * above every reader's snapshot, so no reader has seen it (see Tablet).
   */
  public void remove(CellKey key) {
    ValueSlab.Slice v = tree.remove(key);
    if (v != null) {
      bytes.addAndGet(-(key.weight() + v.length()));
    }
  }

  /** False if no entry of {@code row} was ever added here; true may be wrong (then the seek finds nothing). */
  public boolean mayContainRow(byte[] row) {
    AtomicLongArray small = smallBits.get();
    if (small == null) {
      return false;
    }
    long h = rowHash(row);
    if (bit(small, SMALL_BITS, (int) h) && bit(small, SMALL_BITS, (int) (h >>> 32))) {
      return true;
    }
    AtomicLongArray large = largeBits.get();
    return large != null && bit(large, LARGE_BITS, (int) h) && bit(large, LARGE_BITS, (int) (h >>> 32));
  }

  /** The bytes the row filter's layers take now (for tests). */
  long filterBytes() {
    AtomicLongArray small = smallBits.get();
    AtomicLongArray large = largeBits.get();
    return 8L * ((small == null ? 0 : small.length()) + (large == null ? 0 : large.length()));
  }

  private void markRow(byte[] row) {
    long h = rowHash(row);
    AtomicLongArray large = largeBits.get();
    if (large == null && smallMarked.get() >= SMALL_ROWS) {
      largeBits.compareAndSet(null, new AtomicLongArray(LARGE_BITS / 64));
      large = largeBits.get();
    }
    if (large != null) {
      setBit(large, LARGE_BITS, (int) h);
      setBit(large, LARGE_BITS, (int) (h >>> 32));
      return;
    }
    AtomicLongArray small = smallBits.get();
    if (small == null) {
      smallBits.compareAndSet(null, new AtomicLongArray(SMALL_BITS / 64));
      small = smallBits.get();
    }
    // Counted once per row the layer did not hold yet, not per cell: a row of many cells (or
    // versions) is one row. Two rows hashing alike count once; the layer then holds fewer.
    if (setBit(small, SMALL_BITS, (int) h) | setBit(small, SMALL_BITS, (int) (h >>> 32))) {
      smallMarked.incrementAndGet();
    }
  }

  private static boolean bit(AtomicLongArray bits, int size, int h) {
    int i = h & (size - 1);
    return (bits.get(i >>> 6) & (1L << i)) != 0;
  }

  /** Sets a bit; true if it was not set before. */
  private static boolean setBit(AtomicLongArray bits, int size, int h) {
    int i = h & (size - 1);
    long mask = 1L << i;
    if ((bits.get(i >>> 6) & mask) == 0) {
      return (bits.getAndAccumulate(i >>> 6, mask, (a, b) -> a | b) & mask) == 0;
    }
    return false;
  }

  /** Two independent-enough 32-bit hashes of the row (a 64-bit mix of its array hash). */
  private static long rowHash(byte[] row) {
    long z = Arrays.hashCode(row) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  public long approximateBytes() {
    return bytes.get();
  }

  public boolean isEmpty() {
    return tree.size() == 0;
  }

  public int entryCount() {
    return tree.size();
  }

  /**
   * Adds a change for the tablet's change stream (docs/change-streams.md), beside the entries
   * its row mutation added; counted in {@link #approximateBytes()}, since it keeps the values
   * it names alive.
   */
  public void addChange(Change c) {
    ConcurrentSkipListMap<Long, Change> m = changes;
    if (m == null) {
      synchronized (this) {
        if (changes == null) {
          changes = new ConcurrentSkipListMap<>();
        }
        m = changes;
      }
    }
    if (m.putIfAbsent(c.sequence(), c) == null) {
      bytes.addAndGet(c.approximateBytes());
    }
  }

  /** Takes out the change of a write the commit log failed (see {@link #remove}). */
  public void removeChange(long sequence) {
    ConcurrentSkipListMap<Long, Change> m = changes;
    Change c = m == null ? null : m.remove(sequence);
    if (c != null) {
      bytes.addAndGet(-c.approximateBytes());
    }
  }

  /** The changes added, by sequence: a live view, empty if none was added. */
  public NavigableMap<Long, Change> changes() {
    ConcurrentSkipListMap<Long, Change> m = changes;
    return m == null ? java.util.Collections.emptyNavigableMap() : m;
  }

  /** Highest sequence number added, or -1 if empty. */
  public long maxSequence() {
    return maxSequence.get();
  }

  /**
   * A cursor over the entries. Each seek reads the entries as they are then; whether it sees
   * entries added later is left open (see invariant 3).
   */
  public CellIterator iterator() {
    return tree.cursor();
  }
}
