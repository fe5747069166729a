package io.tabula.client.cli;

import io.grpc.Status;
import io.tabula.client.TabulaException;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The command line's way of waiting: a command runs on the main thread, waits for each
 * operation of the client, and consumes a scan row by row, or a change stream change by change,
 * on that same thread (so its output and files are written by one thread), asking the node for
 * more as it goes.
 */
final class Blocking {
  /** Items asked for at a time; a scan never holds more than this many undelivered rows. */
  private static final int DEMAND = 256;

  private Blocking() {}

  /** Consumes one row or change; may write to a file. */
  interface Handler<T> {
    void accept(T item) throws IOException;
  }

  /** The value of {@code stage}; a failure is thrown as the client's {@link TabulaException}. */
  static <T> T join(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TabulaException(Status.Code.CANCELLED, "interrupted");
    } catch (ExecutionException e) {
      throw failure(e.getCause());
    }
  }

  /**
   * Subscribes to {@code items} and hands each to {@code handler} on the calling thread, in
   * order; returns how many there were. If the handler throws, the subscription is cancelled.
   */
  static <T> long forEach(Flow.Publisher<T> items, Handler<? super T> handler) throws IOException {
    return forEach(items, Long.MAX_VALUE, handler);
  }

  /** {@link #forEach(Flow.Publisher, Handler)} that cancels the subscription after {@code limit} items. */
  static <T> long forEach(Flow.Publisher<T> items, long limit, Handler<? super T> handler) throws IOException {
    BlockingQueue<Object> signals = new LinkedBlockingQueue<>();
    items.subscribe(new Flow.Subscriber<T>() {
      @Override
      public void onSubscribe(Flow.Subscription s) {
        signals.add(s);
      }

      @Override
      public void onNext(T item) {
        signals.add(new Item<>(item));
      }

      @Override
      public void onError(Throwable t) {
        signals.add(new Failed(t));
      }

      @Override
      public void onComplete() {
        signals.add(Done.INSTANCE);
      }
    });
    Flow.Subscription subscription = null;
    long requested = 0;
    long count = 0;
    boolean finished = false;
    try {
      while (count < limit) {
        Object signal = signals.take();
        if (signal instanceof Flow.Subscription s) {
          subscription = s;
          s.request(DEMAND);
          requested = DEMAND;
        } else if (signal instanceof Item<?> item) {
          @SuppressWarnings("unchecked")
          T next = (T) item.value();
          handler.accept(next);
          count++;
          if (requested - count <= DEMAND / 2) {
            subscription.request(DEMAND / 2);
            requested += DEMAND / 2;
          }
        } else if (signal instanceof Failed f) {
          finished = true;
          throw failure(f.error());
        } else {
          finished = true;
          return count;
        }
      }
      return count;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TabulaException(Status.Code.CANCELLED, "interrupted");
    } finally {
      if (!finished && subscription != null) {
        subscription.cancel();
      }
    }
  }

  private static RuntimeException failure(Throwable t) {
    Throwable e = t;
    while (e instanceof CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    return e instanceof RuntimeException r ? r : new TabulaException(Status.Code.UNKNOWN, String.valueOf(e), e);
  }

  /** One item, wrapped: an item could itself be a signal's type. */
  private record Item<T>(T value) {}

  private record Failed(Throwable error) {}

  private enum Done { INSTANCE }
}
