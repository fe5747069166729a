package io.tabula.persistence.iterator;

import io.tabula.persistence.model.CellKey;
import java.io.Closeable;
import java.io.IOException;

/**
 * A seekable cursor over entries in {@link CellKey#ORDER}: memtables, SSTables, blocks,
 * and the merging iterator all speak it (LevelDB's {@code Iterator}).
 *
 * <p>Contract: after {@link #seek} or {@link #seekToFirst}, {@link #valid()} tells whether
 * the cursor is on an entry; {@link #key()} and {@link #value()} require {@code valid()}.
 * Entries come in strictly increasing key order. A corrupt source throws {@link
 * io.tabula.persistence.storage.CorruptionException} (an {@link IOException}) rather than
 * returning bad data. Not thread-safe; {@link #close()} releases what it pins.
 */
public interface CellIterator extends Closeable {
  /** Positions on the first entry at or after {@code target}. */
  void seek(CellKey target) throws IOException;

  void seekToFirst() throws IOException;

  boolean valid();

  /** Moves to the next entry. Requires {@link #valid()}. */
  void next() throws IOException;

  CellKey key();

  /** The entry's value: the cell value for a PUT, the encoded time range for DELETE_COLUMN, empty otherwise. */
  byte[] value();

  @Override
  default void close() throws IOException {}
}
