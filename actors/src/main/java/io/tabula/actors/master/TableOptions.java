package io.tabula.actors.master;

import io.tabula.protocol.kryo.KryoSerializable;

/**
 * A table's settings that Cloud Bigtable's {@code UpdateTable} changes, as the master records
 * them. Immutable.
 *
 * @param deletionProtection while on, the table and its column families cannot be deleted
 *     (FAILED_PRECONDITION), as in Cloud Bigtable
 * @param changeStreamRetentionMicros how long the table's changes are kept for change streams;
 *     0: no change stream (recorded now, served by the change-streams work)
 */
public record TableOptions(boolean deletionProtection, long changeStreamRetentionMicros) implements KryoSerializable {
  /** A table whose settings no one changed. */
  public static final TableOptions NONE = new TableOptions(false, 0);

  public TableOptions {
    if (changeStreamRetentionMicros < 0) {
      throw new IllegalArgumentException("negative retention: " + changeStreamRetentionMicros);
    }
  }

  /**
   * A change, as an {@code UpdateTable} asks it: a null component keeps the table's setting,
   * so two admins changing different settings at once do not undo each other's change.
   */
  public record Change(Boolean deletionProtection, Long changeStreamRetentionMicros) implements KryoSerializable {}

  /** These settings after {@code c}. */
  public TableOptions after(Change c) {
    return new TableOptions(c.deletionProtection() != null ? c.deletionProtection() : deletionProtection,
        c.changeStreamRetentionMicros() != null ? c.changeStreamRetentionMicros() : changeStreamRetentionMicros);
  }
}
