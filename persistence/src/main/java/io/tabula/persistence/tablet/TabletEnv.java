package io.tabula.persistence.tablet;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.cache.ScanCache;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.wal.CommitLog;
import java.util.concurrent.Executor;

/**
 * What a node's tablets share (paper §6): the storage, the one commit log, the block cache,
 * the budget of all their memtables ({@link MemtableBudget}), the executor that runs flushes
 * and the one that runs merging compactions (apart, so a long merge never keeps a flush
 * waiting while writers wait for it), the clock, and the options. {@code flushed} is told
 * after each flush, so the node can delete log segments no tablet needs any more;
 * {@code failures} hears of background work that failed with nobody waiting for it. The node
 * owns and closes all of it; a tablet closes none of it. {@code stats} counts the
 * background work for the node's metrics. {@code scanCache}, when not null, holds rows that
 * point reads took from SSTables ({@link ScanCache}).
 */
public record TabletEnv(Storage storage, CommitLog log, BlockCache cache, MemtableBudget memtables,
    Executor background, Executor merges, MicrosClock clock, TabletOptions options, Runnable flushed,
    BackgroundFailures failures, EngineStats stats, ScanCache scanCache) {
  /** An environment whose background work is counted in a fresh {@link EngineStats}, without a scan cache. */
  public TabletEnv(Storage storage, CommitLog log, BlockCache cache, MemtableBudget memtables, Executor background,
      Executor merges, MicrosClock clock, TabletOptions options, Runnable flushed, BackgroundFailures failures) {
    this(storage, log, cache, memtables, background, merges, clock, options, flushed, failures, new EngineStats(),
        null);
  }

  /** An empty memtable, its values kept as {@link TabletOptions#valueSlabs} says. */
  public io.tabula.persistence.memtable.Memtable newMemtable() {
    return new io.tabula.persistence.memtable.Memtable(options.valueSlabs());
  }
}
