package io.tabula.actors.tablet;

import io.tabula.persistence.tablet.Tablet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * What a tablet does with its memtable and files once writes pause. Not thread-safe: the
 * tablet actor's own.
 *
 * <ul>
 *   <li>After {@link #QUIET_TICKS} ticks without writes, once per quiet spell: when its
 *       memtable holds at least {@link #MIN_FLUSH_BYTES} and at least 1/{@value #FILE_SHARE}
 *       of what its files hold, it flushes the memtable, then compacts its files into one
 *       per group ({@link Action#FLUSH_AND_COMPACT}). Else, when a group has more than one
 *       file, it only compacts them ({@link Action#COMPACT}).
 *   <li>After {@link #LONG_QUIET_TICKS} ticks without writes, a memtable still holding
 *       anything is flushed ({@link Action#FLUSH}), without a compaction.
 * </ul>
 *
 * <p>Why: merging compactions keep files of alike size apart to spare writes, and a
 * memtable keeps every version written to it, so a row rewritten over time lies in several
 * places and a point read goes through each: in {@code bench/run-cluster}, random reads
 * right after a write load used about a quarter less CPU once the paused tablets had
 * flushed and compacted this way. Once writes pause, one pass puts
 * every row in one file with only the versions its GC policy keeps, and drops deleted and
 * expired data. A memtable left in memory also keeps the commit-log segments that hold its
 * writes, which a restart replays: the long-quiet flush lets them go.
 *
 * <p>The share rule bounds what the pause costs: a compaction after a flush rewrites the
 * tablet's files only when the memtable adds at least 1/{@value #FILE_SHARE} of them, so
 * bursts of writes separated by pauses rewrite each byte a bounded number of times, not once
 * per burst.
 */
final class QuietCompaction {
  /** Ticks without writes before a tablet flushes or compacts. */
  static final int QUIET_TICKS = 2;
  /** Ticks without writes before any memtable left is flushed. */
  static final int LONG_QUIET_TICKS = 60;
  /** Smallest memtable flushed at the start of a quiet spell. */
  static final long MIN_FLUSH_BYTES = 1L << 20;
  /** A memtable is flushed at the start of a quiet spell once it holds 1/FILE_SHARE of the files' bytes. */
  static final int FILE_SHARE = 8;

  /** What the tablet does at a tick. */
  enum Action {
    NONE,
    /** Compact the files into one per group. */
    COMPACT,
    /** Flush the memtable, then compact the files into one per group. */
    FLUSH_AND_COMPACT,
    /** Flush the memtable only. */
    FLUSH
  }

  private boolean wroteSinceTick;
  private int quietTicks;

  void wrote() {
    wroteSinceTick = true;
  }

  /**
   * At a tick: what to do now.
   *
   * @param files the tablet's files by group
   * @param memtableBytes bytes in its memtables
   * @param fileBytes bytes of its rows in files
   */
  Action atTick(Map<String, List<String>> files, long memtableBytes, long fileBytes) {
    if (wroteSinceTick) {
      wroteSinceTick = false;
      quietTicks = 0;
      return Action.NONE;
    }
    quietTicks++;
    if (quietTicks == QUIET_TICKS) {
      if (memtableBytes >= MIN_FLUSH_BYTES && memtableBytes >= fileBytes / FILE_SHARE) {
        return Action.FLUSH_AND_COMPACT;
      }
      return files.values().stream().anyMatch(l -> l.size() > 1) ? Action.COMPACT : Action.NONE;
    }
    if (quietTicks == LONG_QUIET_TICKS && memtableBytes > 0) {
      return Action.FLUSH;
    }
    return Action.NONE;
  }

  /**
   * Starts {@code action} on {@code tablet}: null for {@link Action#NONE}, else a stage that
   * completes when it is done. A flush's freeze runs on {@code blockingIo}, as a move's does.
   */
  static CompletableFuture<Void> run(Action action, Tablet tablet, Executor blockingIo) {
    return switch (action) {
      case NONE -> null;
      case COMPACT -> tablet.majorCompact();
      case FLUSH -> flush(tablet, blockingIo);
      case FLUSH_AND_COMPACT -> flush(tablet, blockingIo).thenCompose(x -> tablet.majorCompact());
    };
  }

  private static CompletableFuture<Void> flush(Tablet tablet, Executor blockingIo) {
    return CompletableFuture.supplyAsync(tablet::freezeAndFlush, blockingIo).thenCompose(f -> f);
  }
}
