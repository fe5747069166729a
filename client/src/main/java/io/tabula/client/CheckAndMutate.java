package io.tabula.client;

import com.google.bigtable.v2.Mutation;
import com.google.protobuf.ByteString;
import java.util.List;
import java.util.Objects;

/**
 * Atomic check-and-mutate of one row: if {@code predicate} passes any cell of the row,
 * the {@code onMatch} mutations are applied, otherwise the {@code otherwise} ones. Either
 * side may be left empty, not both. Never retried by the client. Immutable.
 */
public record CheckAndMutate(ByteString key, Filter predicate, List<Mutation> onMatch, List<Mutation> otherwise) {
  public CheckAndMutate {
    Bytes.key(key);
    Objects.requireNonNull(predicate, "predicate");
    onMatch = List.copyOf(onMatch);
    otherwise = List.copyOf(otherwise);
    if (onMatch.isEmpty() && otherwise.isEmpty()) {
      throw new IllegalArgumentException("check-and-mutate needs mutations for the match or the other case");
    }
  }

  /** Applies {@code onMatch} when {@code predicate} passes a cell of the mutation's row. */
  public static CheckAndMutate ifMatches(Filter predicate, RowMutation onMatch) {
    return new CheckAndMutate(onMatch.key(), predicate, onMatch.toProto(), List.of());
  }

  /** Applies {@code otherwise} when {@code predicate} passes no cell of the mutation's row. */
  public static CheckAndMutate unlessMatches(Filter predicate, RowMutation otherwise) {
    return new CheckAndMutate(otherwise.key(), predicate, List.of(), otherwise.toProto());
  }

  /** Both branches; the two mutations must be of the same row. */
  public static CheckAndMutate of(Filter predicate, RowMutation onMatch, RowMutation otherwise) {
    if (!onMatch.key().equals(otherwise.key())) {
      throw new IllegalArgumentException("both branches must mutate the same row");
    }
    return new CheckAndMutate(onMatch.key(), predicate, onMatch.toProto(), otherwise.toProto());
  }
}
