package io.tabula.cluster;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waits, while a node starts, for what it started (a binding, the journal's tables): on the starting thread only. */
final class Starting {
  private Starting() {}

  /** {@code s}'s value within {@code wait}; IllegalStateException naming {@code what} if it fails or takes longer. */
  static <T> T await(CompletionStage<T> s, Duration wait, String what) {
    try {
      return s.toCompletableFuture().get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while " + what, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("failed " + what + ": " + e, e);
    }
  }
}
