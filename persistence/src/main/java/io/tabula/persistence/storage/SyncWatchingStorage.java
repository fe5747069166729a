package io.tabula.persistence.storage;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.CompletableFuture;

/**
 * A storage that notices its first failed fsync, of any file or folder outside the node's own
 * commit log: a manifest's as a tablet opens, an SSTable's as it flushes, the master journal's.
 * After a failed fsync the operating system may have dropped the dirty pages it could not write,
 * and a later fsync may succeed without them, so a node whose disk failed one cannot tell what is
 * durable and must stop (docs/fencing.md, "A disk that refuses fsync"). The failure is rethrown
 * to its caller as a {@link StorageSyncFailedException} (matched by type), and {@link
 * #whenSyncFailed} completes with the first one.
 *
 * <p>Not counted: the node's own commit log (under {@code ownLog}), which tells a failed fsync
 * from a fence itself and stops the node either way; a file or folder that does not exist, or a
 * file closed (or its thread interrupted) under the sync: those say nothing of the disk.
 *
 * <p>Everything else is handed on, the root's own atomic create, in-place overwrite, fence
 * (HDFS recovers the fenced writer's leases) and close included. Keeps no state but that
 * future (thread-safe), so a file's {@link WritableFile#syncsBesideAppends} is handed on too.
 */
public final class SyncWatchingStorage extends ForwardingStorage implements Closeable {
  private final CompletableFuture<StorageSyncFailedException> failed = new CompletableFuture<>();
  private final String ownLog;

  /** @param ownLog the node's commit-log folder, whose files are not watched ({@code logs/<name>}) */
  public SyncWatchingStorage(Storage delegate, String ownLog) {
    super(delegate);
    this.ownLog = ownLog.endsWith("/") ? ownLog.substring(0, ownLog.length() - 1) : ownLog;
  }

  /** Completes with the first fsync this storage saw fail. */
  public CompletableFuture<StorageSyncFailedException> whenSyncFailed() {
    return failed.copy();
  }

  @Override
  public WritableFile create(String path) throws IOException {
    return watched(path, delegate.create(path));
  }

  @Override
  public WritableFile createNew(String path) throws IOException {
    return watched(path, delegate.createNew(path));
  }

  @Override
  public WritableFile createNewInFolder(String path) throws IOException {
    return watched(path, delegate.createNewInFolder(path));
  }

  @Override
  public boolean canOverwrite() {
    return delegate.canOverwrite();
  }

  @Override
  public WritableFile overwrite(String path, long from) throws IOException {
    return watched(path, delegate.overwrite(path, from));
  }

  @Override
  public void fence(String dir) throws IOException {
    delegate.fence(dir);
  }

  @Override
  public boolean isFenced(String dir) {
    return delegate.isFenced(dir);
  }

  @Override
  public void syncDirectory(String dir) throws IOException {
    try {
      delegate.syncDirectory(dir);
    } catch (IOException e) {
      throw failed(dir, e);
    }
  }

  @Override
  public void close() throws IOException {
    if (delegate instanceof Closeable c) {
      c.close();
    }
  }

  private WritableFile watched(String path, WritableFile file) {
    if (inOwnLog(path)) {
      return file;
    }
    return new ForwardingWritableFile(file) {
      @Override
      public void sync() throws IOException {
        try {
          delegate.sync();
        } catch (IOException e) {
          throw failed(path, e);
        }
      }

      @Override
      public boolean syncsBesideAppends() {
        return delegate.syncsBesideAppends();
      }
    };
  }

  private boolean inOwnLog(String path) {
    return path.startsWith(ownLog) && (path.length() == ownLog.length() || path.charAt(ownLog.length()) == '/');
  }

  /** {@code cause}, as a failed fsync if it is one (reported then), else as it is. */
  private IOException failed(String path, IOException cause) {
    if (cause instanceof StorageSyncFailedException s) {
      failed.complete(s);
      return s;
    }
    if (inOwnLog(path) || cause instanceof NoSuchFileException || cause instanceof ClosedChannelException
        || cause instanceof InterruptedIOException || Thread.currentThread().isInterrupted()) {
      return cause;
    }
    StorageSyncFailedException e = new StorageSyncFailedException(path, cause);
    failed.complete(e);
    return e;
  }
}
