package io.tabula.persistence.storage;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * A storage that notices its first failed fsync, of any file or folder: a commit log's, a
 * manifest's, an SSTable's, a tablet opening or a flush. After a failed fsync the operating
 * system may have dropped the dirty pages it could not write, and a later fsync may succeed
 * without them, so a node whose disk failed one cannot tell what is durable and must stop
 * (docs/fencing.md, "A disk that refuses fsync"). The failure is rethrown to its caller as
 * a {@link StorageSyncFailedException} (matched by type), and {@link #whenSyncFailed} completes
 * with the first one.
 *
 * <p>Keeps no state but that future (thread-safe), so a file's {@link
 * WritableFile#syncsBesideAppends} is handed on.
 */
public final class SyncWatchingStorage extends ForwardingStorage {
  private final CompletableFuture<StorageSyncFailedException> failed = new CompletableFuture<>();

  public SyncWatchingStorage(Storage delegate) {
    super(delegate);
  }

  /** Completes with the first fsync this storage saw fail. */
  public CompletableFuture<StorageSyncFailedException> whenSyncFailed() {
    return failed;
  }

  @Override
  public WritableFile create(String path) throws IOException {
    return watched(path, delegate.create(path));
  }

  // Handed on, unlike ForwardingStorage's defaults: the root's own atomic create and in-place
  // overwrite (a commit log prepares its segments with it).
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

  private WritableFile watched(String path, WritableFile file) {
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

  @Override
  public void syncDirectory(String dir) throws IOException {
    try {
      delegate.syncDirectory(dir);
    } catch (IOException e) {
      throw failed(dir, e);
    }
  }

  private StorageSyncFailedException failed(String path, IOException cause) {
    StorageSyncFailedException e = cause instanceof StorageSyncFailedException s ? s
        : new StorageSyncFailedException(path, cause);
    failed.complete(e);
    return e;
  }
}
