package io.tabula.persistence.wal;

/**
 * Commit-log tuning.
 *
 * @param segmentBytes a segment is sealed and a new one started once it passes this size
 * @param durability when an append is reported durable
 */
public record CommitLogOptions(long segmentBytes, Durability durability) {
  public CommitLogOptions {
    if (segmentBytes < 4096) {
      throw new IllegalArgumentException("segmentBytes must be at least 4096, was " + segmentBytes);
    }
    if (durability == null) {
      throw new IllegalArgumentException("durability must be set");
    }
  }

  /** 64 MiB segments, fsync before acknowledging. */
  public static CommitLogOptions defaults() {
    return new CommitLogOptions(64L << 20, Durability.FSYNC);
  }
}
