package io.tabula.actors;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Answers of Pekko's Java ask API as plain {@link CompletableFuture}s.
 *
 * <p>The stages Pekko's javadsl asks return are Scala's {@code CompletableFuture} adapter,
 * which runs every non-async continuation ({@code thenApply}, {@code whenComplete}, ...) as
 * an async one on the default executor. That executor is the common fork-join pool, or,
 * when the pool has fewer than two threads (on a 2-core machine), a new thread per task:
 * a thread start on every reply. {@link #direct} hands the outcome over on the thread that
 * completes the ask instead, so continuations run there as they would on any plain future.
 */
public final class Stages {
  private Stages() {}

  /** A plain future completed, on the completing thread, with the outcome of {@code stage}. */
  public static <T> CompletableFuture<T> direct(CompletionStage<T> stage) {
    CompletableFuture<T> out = new CompletableFuture<>();
    stage.whenCompleteAsync((value, error) -> {
      if (error != null) {
        out.completeExceptionally(error);
      } else {
        out.complete(value);
      }
    }, Runnable::run);
    return out;
  }
}
