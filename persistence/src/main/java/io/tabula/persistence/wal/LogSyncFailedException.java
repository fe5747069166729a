package io.tabula.persistence.wal;

/**
 * An fsync of the commit log failed. After a failed fsync the operating system may have
 * dropped the unwritten pages and marked them clean, so a later fsync can succeed without
 * writing them: which appended bytes are durable is unknown. The log therefore acknowledges
 * nothing more and touches its folder no more; what it acknowledged before was synced, and a
 * recovery elsewhere reads it (the failed batch, at the tail, is cut off there as a torn one,
 * or replayed if it reached the disk whole: its writes' outcome was never acknowledged).
 */
public final class LogSyncFailedException extends LogLostException {
  public LogSyncFailedException(String dir, Throwable cause) {
    super("commit log " + dir + " could not be synced (" + cause.getMessage() + "): it acknowledges nothing more",
        cause);
  }
}
