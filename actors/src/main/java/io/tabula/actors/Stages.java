package io.tabula.actors;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

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

  /**
   * Starts {@code tasks} with at most {@code limit} of them unfinished at any time, and answers
   * each one's outcome, in the order of {@code tasks}. One request that touches thousands of
   * tablets (a {@code MutateRows} loading a pre-split table, each of whose tablets opens at its
   * first write) otherwise puts thousands of asks, shard starts and tablet openings in the
   * node's queues at once, and every other client's call waits behind them; with the bound, a
   * request holds at most {@code limit} places in those queues, and its asks' timeouts count
   * from when each is sent, not from when the request came. Up to {@code limit} tasks start
   * at once, as before.
   */
  public static <T> List<CompletableFuture<T>> atMost(int limit, List<Supplier<CompletionStage<T>>> tasks,
      ClassicActorSystemProvider system) {
    List<CompletableFuture<T>> out = new ArrayList<>(tasks.size());
    for (int i = 0; i < tasks.size(); i++) {
      out.add(new CompletableFuture<>());
    }
    if (tasks.size() <= limit) {
      for (int i = 0; i < tasks.size(); i++) {
        settle(out.get(i), tasks.get(i));
      }
      return out;
    }
    try {
      // A stream that fails or is stopped (its actor system shutting down) fails the tasks it did
      // not start, so every answer completes; completing one that is done already changes nothing.
      Source.range(0, tasks.size() - 1)
          .mapAsyncUnordered(limit, i -> settle(out.get(i), tasks.get(i)))
          .runWith(Sink.ignore(), system)
          .whenComplete((done, failure) -> {
            if (failure != null) {
              out.forEach(f -> f.completeExceptionally(failure));
            }
          });
    } catch (RuntimeException e) {
      out.forEach(f -> f.completeExceptionally(e)); // the materializer has shut down
    }
    return out;
  }

  /** Runs {@code task} into {@code into}; the answer completes when it has, never exceptionally. */
  private static <T> CompletionStage<Done> settle(CompletableFuture<T> into, Supplier<CompletionStage<T>> task) {
    CompletionStage<T> stage;
    try {
      stage = task.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return stage.handle((value, error) -> {
      if (error != null) {
        into.completeExceptionally(error);
      } else {
        into.complete(value);
      }
      return Done.getInstance();
    });
  }
}
