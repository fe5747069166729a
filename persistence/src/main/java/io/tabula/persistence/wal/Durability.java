package io.tabula.persistence.wal;

/** When the commit log reports a record durable. */
public enum Durability {
  /** After the fsync that covers it returned: survives a power cut. */
  FSYNC,
  /**
   * After it was handed out of the process ({@link io.tabula.persistence.storage.WritableFile#flush}:
   * to the operating system's page cache; on HDFS, {@code hflush} to the datanodes' memory), and
   * the folder was found not fenced: survives a crash, pause or partition of the process, and a
   * fence (a recovery elsewhere reads it). A power cut or a kernel crash (on HDFS: of every
   * datanode holding the block) loses the tail not synced yet, up to a segment's worth, and may
   * leave that segment's end damaged (read as corruption).
   */
  OS_BUFFERED
}
