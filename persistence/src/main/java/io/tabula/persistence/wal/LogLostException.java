package io.tabula.persistence.wal;

import java.io.IOException;

/**
 * The commit log acknowledges nothing more, for good: its folder was fenced ({@link
 * LogFencedException}) or an fsync failed ({@link LogSyncFailedException}). The node must drop
 * its tablets without flushing them; the master has them recovered from the log on other
 * nodes (docs/fencing.md). A write refused with this was never acknowledged; whether a
 * recovery sees it is unknown.
 */
public abstract sealed class LogLostException extends IOException
    permits LogFencedException, LogSyncFailedException {
  LogLostException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Whether {@code e}, or any of its causes, is a {@link LogLostException}. */
  public static boolean in(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof LogLostException) {
        return true;
      }
    }
    return false;
  }
}
