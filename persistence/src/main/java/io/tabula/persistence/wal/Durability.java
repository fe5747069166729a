package io.tabula.persistence.wal;

/** When the commit log reports a record durable. */
public enum Durability {
  /** After the fsync that covers it returned: survives a power cut. */
  FSYNC,
  /**
   * After it was handed to the operating system (in its page cache), and the folder was found
   * not fenced: survives a crash, pause or partition of the process, and a fence (a recovery
   * elsewhere reads it). A power cut or a kernel crash loses the tail not synced yet, up to a
   * segment's worth, and may leave that segment's end damaged (read as corruption).
   */
  OS_BUFFERED
}
