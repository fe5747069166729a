package io.tabula.actors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link Stages#atMost}: a request's fan-out to tablets, bounded. */
class StagesTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create();
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void neverMoreThanTheLimitRunAndEveryOutcomeLandsInItsPlace() throws Exception {
    int n = 1_000;
    int limit = 8;
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    List<CompletableFuture<Integer>> pending = new ArrayList<>();
    List<Supplier<CompletionStage<Integer>>> tasks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int v = i;
      tasks.add(() -> {
        most.accumulateAndGet(running.incrementAndGet(), Math::max);
        CompletableFuture<Integer> f = new CompletableFuture<>();
        synchronized (pending) {
          pending.add(f);
        }
        // Tasks finish later, on another thread, some of them failing.
        return f.thenApply(x -> {
          running.decrementAndGet();
          if (v % 10 == 3) {
            throw new IllegalStateException("task " + v);
          }
          return v * 2;
        });
      });
    }
    List<CompletableFuture<Integer>> out = Stages.atMost(limit, tasks, kit.system());
    Thread finisher = new Thread(() -> {
      for (int done = 0; done < n; ) {
        CompletableFuture<Integer> next = null;
        synchronized (pending) {
          // a task finishes only once as many run as may: the limit is reached, never passed
          if (pending.size() >= Math.min(limit, n - done)) {
            next = pending.remove(0);
          }
        }
        if (next == null) {
          Thread.onSpinWait();
        } else {
          next.complete(0);
          done++;
        }
      }
    });
    finisher.start();
    CompletableFuture.allOf(out.toArray(CompletableFuture[]::new)).handle((x, e) -> null).get(30, TimeUnit.SECONDS);
    finisher.join(5_000);
    assertTrue(most.get() <= limit, "at most " + limit + " tasks ran at once, saw " + most.get());
    assertEquals(limit, most.get(), "the limit is used");
    for (int i = 0; i < n; i++) {
      if (i % 10 == 3) {
        int at = i;
        CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
            () -> out.get(at).join());
        assertEquals("task " + i, e.getCause().getMessage());
      } else {
        assertEquals(i * 2, out.get(i).join());
      }
    }
  }

  @Test
  void aTaskThatThrowsFailsAloneAndTheRestRun() throws Exception {
    List<Supplier<CompletionStage<String>>> tasks = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      int v = i;
      tasks.add(() -> {
        if (v == 7) {
          throw new IllegalArgumentException("bad task");
        }
        return CompletableFuture.completedFuture("t" + v);
      });
    }
    List<CompletableFuture<String>> out = Stages.atMost(4, tasks, kit.system());
    CompletableFuture.allOf(out.toArray(CompletableFuture[]::new)).handle((x, e) -> null).get(10, TimeUnit.SECONDS);
    assertTrue(out.get(7).isCompletedExceptionally());
    assertEquals("t49", out.get(49).join());
  }

  @Test
  void whenTheStreamStopsTheTasksItDidNotStartFailAndNoneHangs() throws Exception {
    ActorTestKit own = ActorTestKit.create();
    List<Supplier<CompletionStage<String>>> tasks = new ArrayList<>();
    AtomicInteger started = new AtomicInteger();
    for (int i = 0; i < 10; i++) {
      tasks.add(() -> {
        started.incrementAndGet();
        return new CompletableFuture<>(); // never finishes by itself
      });
    }
    List<CompletableFuture<String>> out = Stages.atMost(2, tasks, own.system());
    own.shutdownTestKit();
    for (int i = 0; i < out.size(); i++) {
      if (i >= started.get()) {
        int at = i;
        org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
            () -> out.get(at).get(10, TimeUnit.SECONDS), "task " + i + " was not started and fails");
      }
    }
    assertEquals(2, started.get(), "two ran before the stop");
    // Asked after its actor system stopped: every task fails, none runs.
    List<CompletableFuture<String>> late = Stages.atMost(2, tasks, own.system());
    for (CompletableFuture<String> f : late) {
      org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
          () -> f.get(10, TimeUnit.SECONDS));
    }
  }
}
