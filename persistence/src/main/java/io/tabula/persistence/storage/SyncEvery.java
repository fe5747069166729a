package io.tabula.persistence.storage;

import java.io.IOException;

/**
 * A file that is synced each time {@code everyBytes} more have been appended, besides the
 * syncs its writer asks for (RocksDB's {@code bytes_per_sync}). For the large files that
 * flushes and compactions write ({@code tabula.node.sstable-sync-every}, off by default).
 *
 * <p>What it is for: on a local file system a file written in one go and synced only at its
 * end has all its bytes dirty in the page cache until that sync, which then puts them all in
 * the disk's queue at once; the commit log's next sync waits behind them, and every write
 * waiting for that group commit waits too. (The commit log's prepared segments, which spare
 * its syncs the file system's journal, do not change that: bench/run-sync-entanglement.)
 *
 * <p>What it bought and cost on this project's test machine:
 * <ul>
 *   <li>Alone ({@code bench/run-sync-entanglement}: 1 KiB appends, each synced, while another
 *       thread wrote three 64 MiB files): the longest append's sync took 103 to 113 ms when the
 *       big files were synced at their ends, 4 ms when they were synced every MiB, but the
 *       median sync rose from 0.25 to 2.6 ms; writing the big files took a fifth longer.
 *   <li>In a node under the official client's Batcher loads: the longest commit-log sync fell
 *       from 193 to 106 ms, but as many syncs took over 50 ms (11), for the same time in all.
 *   <li>In the engine (bench/run-figure6), durable writes were 4 to 20% slower every MiB.
 * </ul>
 * Hence off by default: on that disk the syncs compete for the same device whatever their
 * order. A disk with more bandwidth than its writers need may gain from it.
 *
 * <p>Costs one more sync per {@code everyBytes} on the writing thread, which is a background
 * one; on HDFS each is an {@code hsync}. Not thread-safe, like the file it wraps.
 */
public final class SyncEvery extends ForwardingWritableFile {
  private final long everyBytes;
  /** The position at the last sync (ours or the writer's). */
  private long syncedAt;

  private SyncEvery(WritableFile delegate, long everyBytes) {
    super(delegate);
    this.everyBytes = everyBytes;
    this.syncedAt = delegate.position();
  }

  /** {@code file}, synced every {@code everyBytes} appended; {@code file} itself when {@code everyBytes} is 0. */
  public static WritableFile wrap(WritableFile file, long everyBytes) {
    if (everyBytes < 0) {
      throw new IllegalArgumentException("everyBytes must be 0 (off) or more, was " + everyBytes);
    }
    return everyBytes == 0 ? file : new SyncEvery(file, everyBytes);
  }

  @Override
  public void append(byte[] b, int off, int len) throws IOException {
    delegate.append(b, off, len);
    if (delegate.position() - syncedAt >= everyBytes) {
      sync();
    }
  }

  @Override
  public void sync() throws IOException {
    delegate.sync();
    syncedAt = delegate.position();
  }

  @Override
  public void truncate(long size) throws IOException {
    delegate.truncate(size);
    syncedAt = Math.min(syncedAt, size);
  }
}
