package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tabula.client.Row;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Counts demand exactly: {@link #request} adds to the outstanding demand before passing
 * it on, every onNext takes one, and a row arriving with no demand outstanding is counted
 * in {@link #excess}. Rows go to a queue the test takes them from.
 */
final class CountingSubscriber implements Flow.Subscriber<Row> {
  final AtomicLong outstanding = new AtomicLong();
  final AtomicLong excess = new AtomicLong();
  final AtomicLong received = new AtomicLong();
  final BlockingQueue<Row> rows = new LinkedBlockingQueue<>();
  final AtomicReference<Throwable> error = new AtomicReference<>();
  final CountDownLatch subscribed = new CountDownLatch(1);
  final CountDownLatch done = new CountDownLatch(1);
  final CountDownLatch cancelled = new CountDownLatch(1);
  volatile long cancelAt = Long.MAX_VALUE;
  private volatile Flow.Subscription subscription;

  @Override
  public void onSubscribe(Flow.Subscription s) {
    subscription = s;
    subscribed.countDown();
  }

  @Override
  public void onNext(Row row) {
    if (outstanding.getAndUpdate(n -> n == Long.MAX_VALUE ? n : n - 1) <= 0) {
      excess.incrementAndGet();
    }
    rows.add(row);
    if (received.incrementAndGet() == cancelAt) {
      subscription.cancel();
      cancelled.countDown();
    }
  }

  @Override
  public void onError(Throwable t) {
    error.set(t);
    done.countDown();
  }

  @Override
  public void onComplete() {
    done.countDown();
  }

  void awaitSubscription() throws InterruptedException {
    assertTrue(subscribed.await(10, TimeUnit.SECONDS), "no onSubscribe");
  }

  void request(long n) {
    outstanding.getAndUpdate(d -> d + n < d ? Long.MAX_VALUE : d + n);
    subscription.request(n);
  }

  void cancel() {
    subscription.cancel();
  }

  Row next() throws InterruptedException {
    Row r = rows.poll(30, TimeUnit.SECONDS);
    if (r == null) {
      fail("no row within 30 s; error: " + error.get());
    }
    return r;
  }

  void awaitCompletion() throws InterruptedException {
    assertTrue(done.await(30, TimeUnit.SECONDS), "the scan did not complete");
    assertNull(error.get(), "the scan failed");
  }

  /** The error the stream ended with (waits up to 30 s for it to end); fails if it completed. */
  Throwable awaitFailure() throws InterruptedException {
    assertTrue(done.await(30, TimeUnit.SECONDS), "the scan did not end");
    assertNotNull(error.get(), "the scan completed instead of failing");
    return error.get();
  }

  void awaitCancelled() throws InterruptedException {
    assertTrue(cancelled.await(30, TimeUnit.SECONDS), "the subscriber did not reach " + cancelAt + " rows; "
        + received.get() + " so far, error " + error.get());
    assertNotNull(subscription);
  }
}
