package io.tabula.persistence.wal;

/** When the commit log reports a record durable. */
public enum Durability {
  /** After the fsync that covers it returned: survives a power cut. */
  FSYNC,
  /** After it was handed to the operating system: survives a process crash, not a power cut (benchmarks). */
  OS_BUFFERED
}
