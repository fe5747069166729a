package io.tabula.client;

import com.google.protobuf.ByteString;
import java.util.Optional;

/**
 * The outcome of one row of {@link TabulaClient#applyBatch}: the row's position in the
 * batch, its key, and the failure if the row's mutation was not applied. Each row of a
 * batch is atomic on its own (§3); rows succeed or fail independently.
 */
public record MutationResult(int index, ByteString key, Optional<TabulaException> error) {
  public boolean ok() {
    return error.isEmpty();
  }
}
