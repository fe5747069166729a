package io.tabula.persistence.tablet;

/**
 * Where the failures of work nobody waits for go: a flush or merging compaction that failed,
 * an SSTable file that could not be closed or deleted (left behind as garbage), a commit-log
 * segment that could not be deleted, a major compaction whose future was not kept. Without
 * it they would vanish. The node's implementation logs each; tests read what was reported.
 *
 * <p>Implementations must be thread-safe and must not throw or block: they are called on the
 * engine's background threads.
 */
@FunctionalInterface
public interface BackgroundFailures {
  /**
   * Reports a failure.
   *
   * @param what the work that failed, for people ("flush of tablet t-1", "deleting tables/t/t-1/000007.sst")
   */
  void report(String what, Throwable failure);

  /** Reports through the JDK's platform logger (for programs that configure no other). */
  static BackgroundFailures systemLogger() {
    System.Logger log = System.getLogger("io.tabula.persistence");
    return (what, failure) -> log.log(System.Logger.Level.WARNING, what + " failed", failure);
  }
}
