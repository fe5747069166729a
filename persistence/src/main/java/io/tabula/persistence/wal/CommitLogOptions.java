package io.tabula.persistence.wal;

/**
 * Commit-log tuning.
 *
 * @param segmentBytes a segment is sealed and a new one started once it passes this size
 * @param durability when an append is reported durable
 * @param preallocate whether segments are made ahead of need, zero-filled to
 *     {@code segmentBytes} and synced, so that the writer's syncs change no file metadata
 *     ({@link SegmentPreparer}); only with {@link Durability#FSYNC} (a buffered log syncs at
 *     its rolls only, and the zeros cost it more than they save: 13% of the engine's buffered
 *     random writes) and on storage that can write a file in place
 */
public record CommitLogOptions(long segmentBytes, Durability durability, boolean preallocate) {
  public CommitLogOptions {
    if (segmentBytes < 4096) {
      throw new IllegalArgumentException("segmentBytes must be at least 4096, was " + segmentBytes);
    }
    if (durability == null) {
      throw new IllegalArgumentException("durability must be set");
    }
  }

  /** Preallocated segments of {@code segmentBytes}. */
  public CommitLogOptions(long segmentBytes, Durability durability) {
    this(segmentBytes, durability, true);
  }

  /** 64 MiB segments, preallocated, fsync before acknowledging. */
  public static CommitLogOptions defaults() {
    return new CommitLogOptions(64L << 20, Durability.FSYNC);
  }
}
