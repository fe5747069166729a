package io.tabula.persistence.wal;

import java.io.IOException;

/**
 * A commit-log folder named for recovery does not exist. A log makes its folder when it opens
 * and nothing else ever makes it again, and a folder named by the directory is swept only once
 * no tablet names it; so a missing one means this storage is not the one the cluster shares
 * (another data directory, another machine's disk), or someone removed the folder. Either way
 * its records are not here: the recovery fails, rather than replaying nothing and letting the
 * log be forgotten with the writes it acknowledged.
 */
public final class LogFolderMissingException extends IOException {
  private final String dir;

  public LogFolderMissingException(String dir) {
    super("commit-log folder " + dir + " does not exist: a log named for recovery is never removed before it is "
        + "recovered, so this storage is not the one the cluster shares, or the folder was removed");
    this.dir = dir;
  }

  /** The folder that is missing. */
  public String dir() {
    return dir;
  }
}
