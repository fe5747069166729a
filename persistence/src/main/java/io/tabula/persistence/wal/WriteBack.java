package io.tabula.persistence.wal;

import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * For a log in {@link Durability#OS_BUFFERED} mode: syncs the segment being written in the
 * background every {@code every} bytes (RocksDB's {@code wal_bytes_per_sync}), so that the sync
 * a roll makes before the next segment starts (a sealed segment is whole on disk) finds little
 * left to write. Without it, that sync wrote a whole segment's dirty pages (150 to 300 ms for
 * 64 MiB on the machines the benchmarks ran on) while no write was acknowledged.
 *
 * <p>Only for files whose sync may run beside their appends ({@link WritableFile#syncsBesideAppends}).
 * A background sync that fails is reported at the writer's next batch, roll, cut or close as
 * {@link LogSyncFailedException}: the log is then lost, as after any failed sync. In
 * this mode no acknowledged record was durable anyway; the failure only stops the log from
 * going on over pages the operating system may have dropped.
 *
 * <p>Owned by the log's writer thread; the syncs run on a daemon thread of their own, one at
 * a time.
 */
final class WriteBack {
  private final String dir;
  private final long every;
  private final ExecutorService syncer;
  private WritableFile file;
  /** The position of {@link #file} when its last background sync was asked for. */
  private long askedAt;
  /** The background sync in flight or last done; null if none since the last {@link #await}. */
  private CompletableFuture<Void> sync;

  WriteBack(String dir, long every) {
    this.dir = dir;
    this.every = every;
    this.syncer = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "tabula-commit-log-write-back");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * After an append to {@code f}: asks for a background sync once {@code every} bytes have come
   * since the last; throws if an earlier background sync failed (the log is then lost).
   */
  void wrote(WritableFile f) throws LogSyncFailedException {
    if (!f.syncsBesideAppends()) {
      return;
    }
    if (sync != null && sync.isCompletedExceptionally()) {
      await();
    }
    if (f != file) {
      file = f;
      askedAt = 0;
    }
    if (sync != null && !sync.isDone() || f.position() - askedAt < every) {
      return;
    }
    askedAt = f.position();
    sync = CompletableFuture.runAsync(() -> {
      try {
        f.sync();
      } catch (IOException e) {
        throw new CompletionException(e);
      }
    }, syncer);
  }

  /**
   * Waits for the background sync in flight, so that the file can be synced, cut or closed by
   * the writer; throws if a background sync failed since the last call.
   */
  void await() throws LogSyncFailedException {
    CompletableFuture<Void> s = sync;
    sync = null;
    if (s == null) {
      return;
    }
    try {
      s.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      throw new LogSyncFailedException(dir, cause instanceof IOException io ? io : new IOException(cause));
    }
  }

  /** Stops the sync thread once its sync in flight, if any, is done; call after the writer has stopped. */
  void close() {
    syncer.shutdown();
  }
}
