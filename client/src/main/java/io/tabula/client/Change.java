package io.tabula.client;

import com.google.protobuf.ByteString;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One committed change of one row, as a table's change stream carries it
 * (docs/change-streams.md): the row, when the node committed it, the mutations it applied in
 * their order, and the token of the stream's position after it. A value the node sent in
 * pieces is whole here. A row delete comes as one {@link DeleteFamily} per family of the
 * table, and an aggregate write as the {@link MergeToCell} it was applied as. Immutable.
 *
 * @param key the row key
 * @param commitTime when the node committed the change (microsecond precision); commit times
 *     of one row never fall
 * @param token the position after this change in the partition that carried it (opaque)
 * @param mutations what the change did, in order
 */
public record Change(ByteString key, Instant commitTime, String token, List<Mutation> mutations) {
  public Change {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(commitTime, "commitTime");
    Objects.requireNonNull(token, "token");
    mutations = List.copyOf(mutations);
  }

  public String keyUtf8() {
    return key.toStringUtf8();
  }

  /** The commit time in microseconds since the epoch. */
  public long commitMicros() {
    return Math.addExact(Math.multiplyExact(commitTime.getEpochSecond(), 1_000_000L), commitTime.getNano() / 1_000);
  }

  /** One mutation of a change; each names the family it touched. */
  public sealed interface Mutation permits SetCell, DeleteCells, DeleteFamily, MergeToCell {
    String family();
  }

  /** A cell written: its column, timestamp in microseconds and whole value. */
  public record SetCell(String family, ByteString qualifier, long timestampMicros, ByteString value)
      implements Mutation {}

  /**
   * The versions of one column with timestamps in [fromMicros, toMicros) deleted; a {@code
   * toMicros} of 0 means no upper bound (as {@link RowMutation#deleteCells} takes it).
   */
  public record DeleteCells(String family, ByteString qualifier, long fromMicros, long toMicros)
      implements Mutation {}

  /** Every cell of one family of the row deleted. */
  public record DeleteFamily(String family) implements Mutation {}

  /** An aggregate cell's input merged in at a timestamp in microseconds: the state it was applied as. */
  public record MergeToCell(String family, ByteString qualifier, long timestampMicros, ByteString input)
      implements Mutation {}
}
