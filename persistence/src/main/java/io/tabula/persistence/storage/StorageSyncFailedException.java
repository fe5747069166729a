package io.tabula.persistence.storage;

import java.io.IOException;

/** An fsync of a file or a folder failed: what was written there may not be durable ({@link SyncWatchingStorage}). */
public final class StorageSyncFailedException extends IOException {
  private final String path;

  public StorageSyncFailedException(String path, IOException cause) {
    super("fsync of " + path + " failed: " + cause.getMessage(), cause);
    this.path = path;
  }

  /** The file or folder whose fsync failed, relative to the storage root. */
  public String path() {
    return path;
  }
}
