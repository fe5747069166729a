package io.tabula.persistence.tablet;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The memory all the memtables of a node may hold together. A tablet's own limit (a memtable
 * is frozen at {@link TabletOptions#memtableBytes}) bounds one tablet, not a node that serves
 * many: two dozen tablets of a steady write load each grew a memtable towards 64 MiB and a
 * node with a 1 GiB heap died of OutOfMemoryError. So the node counts the bytes in every
 * open tablet's active and frozen memtables, as HBase bounds its region server's memstores:
 *
 * <ul>
 *   <li>from {@value #FLUSH_AT_PERCENT}% of the budget, the largest active memtables are
 *       frozen and flushed, until those waiting for their flush would, once flushed, bring the
 *       total down to {@value #FLUSH_TO_PERCENT}%;
 *   <li>at the whole budget, writes wait ({@link #full}: a tablet actor holds them, a caller
 *       that may block waits) until flushes bring the total under it again.
 * </ul>
 *
 * <p>The total is summed over the tablets every {@link #checkEvery} bytes written (and after
 * each flush, and while writes wait), not kept per write: an add to a memtable stays one
 * atomic add. So the memtables may pass the budget by up to about two check steps (a check
 * skipped while another runs) plus the writes in flight: a step is 1/64 of the budget, and at
 * least 64 KiB.
 *
 * <p>Thread-safe. The check runs on whichever thread triggers it, one at a time ({@link
 * #checking}, only ever tried, never waited for); it is called holding no tablet lock and
 * takes a tablet's locks only through the tablet's own freeze, so it adds no lock order.
 */
public final class MemtableBudget {
  static final int FLUSH_AT_PERCENT = 75;
  static final int FLUSH_TO_PERCENT = 50;
  /** The smallest budget accepted: below it, memtables would be flushed as tiny files. */
  public static final long MIN_BYTES = 1L << 20;

  private final long limit;
  private final long checkEvery;
  private final Set<Tablet> tablets = ConcurrentHashMap.newKeySet();
  /** Bytes written since the last check. */
  private final AtomicLong sinceCheck = new AtomicLong();
  private final ReentrantLock checking = new ReentrantLock();
  /** What the last check found: whether the memtables hold the whole budget. */
  private volatile boolean full;
  /** When a full check last asked the tablets with frozen memtables to flush again. */
  @GuardedBy("checking")
  private long lastRetryNanos = System.nanoTime() - RETRY_NANOS;
  /** How often, while full, frozen memtables whose flush failed (a full disk) are flushed again. */
  private static final long RETRY_NANOS = 1_000_000_000L;

  /** @param limit bytes all memtables may hold together ({@link #checked}) */
  public MemtableBudget(long limit) {
    this.limit = checked(limit);
    this.checkEvery = Math.max(64 << 10, limit / 64);
  }

  /** {@code limit}, if a budget may be that large: at least {@link #MIN_BYTES}. */
  public static long checked(long limit) {
    if (limit < MIN_BYTES) {
      throw new IllegalArgumentException("a memtable budget must be at least " + MIN_BYTES + " bytes, was " + limit);
    }
    return limit;
  }

  /** The bytes of {@code percent} of the heap this JVM may grow to (at least {@link #MIN_BYTES}). */
  public static long heapShare(double percent) {
    if (!(percent > 0 && percent <= 90)) {
      throw new IllegalArgumentException("a memtable budget must be more than 0% and at most 90% of the heap, was "
          + percent + "%");
    }
    return Math.max(MIN_BYTES, (long) (Runtime.getRuntime().maxMemory() * percent / 100));
  }

  /** What all the memtables may hold together. */
  public long limit() {
    return limit;
  }

  /** What the open tablets' memtables (active and frozen) hold now, about; for the node's metrics. */
  public long bytes() {
    long total = 0;
    for (Tablet t : tablets) {
      total += TabletSizes.memtableBytes(t.currentVersion());
    }
    return total;
  }

  /** Bytes written between two checks. */
  long checkEvery() {
    return checkEvery;
  }

  private static boolean freeze(Tablet t) {
    try {
      return t.freezeForBudget();
    } catch (RuntimeException closing) {
      // The tablet closed meanwhile (its executor may be shut down): nothing to free there.
      return false;
    }
  }

  void register(Tablet t) {
    tablets.add(t);
  }

  void unregister(Tablet t) {
    tablets.remove(t);
  }

  /** A writer added about {@code bytes} to a memtable. */
  void grew(long bytes) {
    if (sinceCheck.addAndGet(bytes) >= checkEvery) {
      check();
    }
  }

  /**
   * Whether writes must wait for flushes now. While the last check found the budget full,
   * each call checks again, so a waiting writer sees the flushes' progress.
   */
  boolean full() {
    if (full) {
      check();
    }
    return full;
  }

  /**
   * Sums the memtables; freezes the largest if the total calls for it; updates {@link #full}.
   * While full, also flushes again, once a second, the frozen memtables that wait (a flush
   * that failed is retried by nothing else while writes wait). Never throws: it runs in
   * writers' and flushes' paths, and a tablet closing under it is only passed over.
   */
  void check() {
    if (!checking.tryLock()) {
      return;
    }
    try {
      sinceCheck.set(0);
      List<Tablet> open = new ArrayList<>(tablets);
      long[] active = new long[open.size()];
      long frozen = 0;
      long total = 0;
      for (int i = 0; i < open.size(); i++) {
        TabletVersion v = open.get(i).currentVersion();
        active[i] = v.active.approximateBytes();
        long all = TabletSizes.memtableBytes(v);
        frozen += all - active[i];
        total += all;
      }
      if (total >= limit / 100 * FLUSH_AT_PERCENT) {
        long toFlush = total - limit / 100 * FLUSH_TO_PERCENT;
        List<Integer> largest = new ArrayList<>(open.size());
        for (int i = 0; i < open.size(); i++) {
          largest.add(i);
        }
        largest.sort(Comparator.comparingLong((Integer i) -> active[i]).reversed());
        for (int i : largest) {
          if (frozen >= toFlush || active[i] == 0) {
            break;
          }
          if (freeze(open.get(i))) {
            frozen += active[i];
          }
        }
      }
      full = total >= limit;
      long now = System.nanoTime();
      if (full && now - lastRetryNanos >= RETRY_NANOS) {
        lastRetryNanos = now;
        for (Tablet t : open) {
          try {
            t.retryFlush();
          } catch (RuntimeException closing) {
            // The tablet closed meanwhile (its executor may be shut down): nothing to flush.
          }
        }
      }
    } finally {
      checking.unlock();
    }
  }
}
