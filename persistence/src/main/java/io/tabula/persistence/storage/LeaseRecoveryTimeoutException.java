package io.tabula.persistence.storage;

import java.io.IOException;
import java.time.Duration;

/**
 * Fencing a commit-log folder on HDFS could not close one of its files in time: the
 * namenode's lease recovery is stuck (a datanode holding the last block is down, say).
 * The folder is not fenced yet; the caller reports it and tries again later.
 */
public final class LeaseRecoveryTimeoutException extends IOException {
  private final String path;

  public LeaseRecoveryTimeoutException(String path, Duration waited) {
    super("HDFS lease recovery of " + path + " did not finish within " + waited.toSeconds()
        + " s; the log it belongs to is not fenced yet");
    this.path = path;
  }

  /** The file still open for writing. */
  public String path() {
    return path;
  }
}
