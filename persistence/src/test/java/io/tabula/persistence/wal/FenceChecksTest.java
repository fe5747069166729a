package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Shared looks at the fence: each caller's answer comes from a look begun after it called. */
class FenceChecksTest {
  /**
   * 16 threads call 2,000 times; halfway, the fence is set. A caller that arrived after the
   * fence was set must be told "fenced" (its look began after it arrived), however the looks
   * were shared; and far fewer looks than calls are made, one at a time.
   */
  @Test
  void aCallerArrivingAfterTheFenceIsToldSoAndLooksAreShared() throws Exception {
    AtomicLong clock = new AtomicLong(); // a logical clock: ticks at each arrival and at the fence
    AtomicBoolean marker = new AtomicBoolean();
    AtomicLong fencedAt = new AtomicLong(Long.MAX_VALUE);
    AtomicInteger looks = new AtomicInteger();
    AtomicInteger inFlight = new AtomicInteger();
    AtomicBoolean overlapped = new AtomicBoolean();
    FenceChecks checks = new FenceChecks(() -> {
      if (inFlight.incrementAndGet() > 1) {
        overlapped.set(true);
      }
      looks.incrementAndGet();
      boolean seen = marker.get();
      try {
        Thread.sleep(1); // a namenode round trip
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      inFlight.decrementAndGet();
      return seen;
    });
    ExecutorService pool = Executors.newFixedThreadPool(16);
    int calls = 2_000;
    AtomicInteger started = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    List<Future<long[]>> called = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      called.add(pool.submit(() -> {
        go.await();
        if (started.incrementAndGet() == calls / 2) {
          marker.set(true);
          fencedAt.set(clock.incrementAndGet());
        }
        long at = clock.incrementAndGet();
        return new long[] {at, checks.fenced() ? 1 : 0};
      }));
    }
    go.countDown();
    int late = 0;
    for (Future<long[]> f : called) {
      long[] r = f.get(60, TimeUnit.SECONDS);
      if (r[0] > fencedAt.get()) {
        late++;
        assertEquals(1, r[1], "a caller that arrived after the fence (tick " + r[0] + " > " + fencedAt.get()
            + ") was told it was not fenced");
      }
    }
    pool.shutdown();
    assertTrue(late > 0, "some callers arrived after the fence");
    assertFalse(overlapped.get(), "one look in flight at a time");
    assertTrue(looks.get() < calls / 4, "looks are shared: " + looks.get() + " looks for " + calls + " calls");
    System.out.printf("FenceChecksTest: %d looks answered %d calls from 16 threads%n", looks.get(), calls);
  }

  @Test
  void aFenceSetBeforeTheCallIsSeenAndAFailedLookIsThrown() {
    AtomicBoolean marker = new AtomicBoolean();
    FenceChecks checks = new FenceChecks(marker::get);
    assertFalse(checks.fenced());
    marker.set(true);
    assertTrue(checks.fenced(), "a look after the fence sees it");
    FenceChecks broken = new FenceChecks(() -> {
      throw new java.io.UncheckedIOException(new java.io.IOException("namenode unreachable"));
    });
    assertEquals("namenode unreachable",
        assertThrows(java.io.UncheckedIOException.class, broken::fenced).getCause().getMessage());
  }
}
