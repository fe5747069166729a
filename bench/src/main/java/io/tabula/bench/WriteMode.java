package io.tabula.bench;

/** How a write workload acknowledges its writes. */
enum WriteMode {
  /** A write counts once its commit-log record is fsynced; concurrent writes share an fsync. */
  DURABLE,
  /** A write counts once its commit-log record is handed to the OS, without fsync. */
  BUFFERED
}
