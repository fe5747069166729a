package io.tabula.persistence.wal;

/**
 * The commit log's folder has been fenced ({@link io.tabula.persistence.storage.Storage#fence}):
 * another node recovers it now, so nothing more is acknowledged from it. The records of the
 * group that found the fence may or may not be seen by that recovery: their writes' outcome
 * is unknown to their clients, never acknowledged.
 */
public final class LogFencedException extends LogLostException {
  public LogFencedException(String dir) {
    super("commit log " + dir + " is fenced: its tablets are being served by other nodes", null);
  }

  /** Whether {@code e}, or any of its causes, is a {@link LogFencedException}. */
  public static boolean in(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof LogFencedException) {
        return true;
      }
    }
    return false;
  }
}
