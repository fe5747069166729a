package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Filters;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The source of a move freezes during the hand-over. The master's node n1 owns one tablet T and
 * moves it to n2; once the move is handed over (T's owner is n2, the tablet still served at
 * n1: sharding hands it over at its next rebalance, 20 s apart here so the window is wide), n1
 * is frozen ({@code SIGSTOP}). n1 then owns no tablet, so no rule about owners fences it; it is
 * downed and removed, a new master starts, and sharding allocates T straight to its owner n2,
 * which opens it replaying n1's log. Clients keep writing and reading T through n1 (their calls
 * queue on its port) and through n2. Then n1 resumes ({@code SIGCONT}).
 *
 * <p>Proves the rule of docs/fencing.md that every log folder a tablet's placement names, other
 * than the opener's own, is fenced (or released by its live writer) before the tablet opens
 * anywhere, whatever the reason its writer left. Before it, n2 replayed n1's log unfenced; the
 * resumed n1 went on serving T from its stale copy, acknowledging writes into a log nobody would
 * read again and answering reads that missed n2's writes.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class MovingSourceFrozenTest {
  private static final TableId T = TableId.of("t");

  @Test
  void theSourceOfAMoveFrozenInItsHandOverIsFencedBeforeTheDestinationServes() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.configure("pekko.cluster.sharding.rebalance-interval = 20s\n");
      NodeJvm n1 = cluster.add("n1");
      NodeJvm n2 = cluster.add("n2");
      cluster.add("n3");
      ClusterFixture.assertRunsMaster(n1);
      ClusterFixture.createTable(n1, "t", List.of("k1", "k2"));
      Map<String, String[]> placed = Workload.awaitPlacement(n1, Set.of("n1", "n2", "n3"), Duration.ofSeconds(60),
          t -> t.values().stream().filter(o -> o[0].equals("n1")).count() == 1);
      List<String> ids = new ArrayList<>(placed.keySet());
      int range = 0;
      while (!placed.get(ids.get(range))[0].equals("n1")) {
        range++;
      }
      String tablet = ids.get(range);
      String prefix = "k" + range;
      String register = prefix + "-reg";
      System.out.printf("n1 owns tablet %s (rows %s...): it moves to n2%n", tablet, prefix);

      Clients clients = new Clients(prefix, register);
      clients.start(n1);
      clients.start(n2);
      try {
        Thread.sleep(2_000);
        var answer = n1.post("/tabula/tablets/" + tablet + "/move?to=n2");
        assertEquals(202, answer.statusCode(), answer.body());
        awaitState(n1, tablet, "n2", "moving", Duration.ofSeconds(30));
        long stoppedAt = System.nanoTime();
        n1.signal("STOP");
        awaitState(n2, tablet, "n2", "serving", Duration.ofSeconds(120));
        System.out.printf("n1 frozen in the hand-over: %s served at n2 %d ms later%n", tablet,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt));
        Thread.sleep(5_000);
        long resumedAt = System.nanoTime();
        n1.signal("CONT");
        assertTrue(n1.awaitExit(Duration.ofSeconds(60)), "n1 still runs 60 s after it resumed; its log:\n"
            + n1.tail(60));
        System.out.printf("n1 stopped %d ms after it resumed%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumedAt));
        Thread.sleep(2_000);
      } finally {
        clients.stop();
      }
      clients.check(n2);
    }
  }

  /** Polls {@code via}'s tablet list until {@code tablet} is owned by {@code owner} in state {@code state}. */
  private static void awaitState(NodeJvm via, String tablet, String owner, String state, Duration within)
      throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    String[] last = null;
    while (System.nanoTime() < deadline) {
      try {
        last = ClusterFixture.tablets(via, "t").get(tablet);
        if (last != null && last[0].equals(owner) && last[1].equals(state)) {
          return;
        }
      } catch (java.io.IOException notNow) {
        // no master yet to answer
      }
      Thread.sleep(100);
    }
    throw new AssertionError("tablet " + tablet + " was not " + state + " at " + owner + " within " + within
        + " (last seen: " + (last == null ? "nothing" : last[0] + "/" + last[1]) + ")");
  }

  /**
   * Through each node started: a writer of unique rows of the moving tablet keeping 64 writes in
   * flight (every acknowledged row must read back), and a writer and a reader of its register
   * row (unique values; the history must be linearizable). Calls may wait 90 s, so those queued
   * on a frozen node's port are answered when it resumes.
   */
  private static final class Clients {
    private final String prefix;
    private final String register;
    private final RegisterHistory history = new RegisterHistory();
    private final ConcurrentLinkedQueue<String> acked = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final List<Thread> threads = new ArrayList<>();
    private final List<InFlightWriter> writers = new ArrayList<>();

    Clients(String prefix, String register) {
      this.prefix = prefix;
      this.register = register;
    }

    void start(NodeJvm via) {
      InFlightWriter rows = new InFlightWriter(via, List.of(prefix), 64);
      rows.start();
      writers.add(rows);
      thread("register-writer-" + via.name, via, c -> {
        for (int seq = 0; !stop.get(); seq++) {
          String value = via.name + "-" + seq;
          long invoked = System.nanoTime();
          try {
            c.mutateRow(RowMutation.create(T, register).setCell("f", "q", value));
            history.write(register, value, invoked, System.nanoTime());
          } catch (com.google.api.gax.rpc.ApiException unknown) {
            history.write(register, value, invoked, RegisterHistory.NEVER);
            Thread.sleep(50);
          }
        }
      });
      thread("register-reader-" + via.name, via, c -> {
        while (!stop.get()) {
          read(c);
        }
      });
    }

    private boolean read(BigtableDataClient c) throws InterruptedException {
      long invoked = System.nanoTime();
      try {
        Row r = c.readRow(T, register, Filters.FILTERS.limit().cellsPerColumn(1));
        history.read(register, r == null || r.getCells("f", "q").isEmpty() ? null
            : r.getCells("f", "q").get(0).getValue().toStringUtf8(), invoked, System.nanoTime());
        return true;
      } catch (com.google.api.gax.rpc.ApiException failed) {
        Thread.sleep(50);
        return false;
      }
    }

    private interface Body {
      void run(BigtableDataClient c) throws Exception;
    }

    private void thread(String name, NodeJvm via, Body body) {
      Thread t = new Thread(() -> {
        try (BigtableDataClient c = ClusterFixture.data(via, Duration.ofSeconds(90))) {
          body.run(c);
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, name);
      t.setDaemon(true);
      t.start();
      threads.add(t);
    }

    void stop() throws InterruptedException {
      stop.set(true);
      for (InFlightWriter w : writers) {
        w.stop();
        acked.addAll(w.acked());
      }
      for (Thread t : threads) {
        t.join(120_000);
      }
      if (failure.get() != null) {
        throw new AssertionError("a client failed", failure.get());
      }
    }

    /** Every acknowledged row reads back through {@code via}, and the register's history is linearizable. */
    void check(NodeJvm via) throws Exception {
      Set<String> read = new TreeSet<>();
      try (BigtableDataClient c = ClusterFixture.data(via)) {
        for (Row r : c.readRows(Query.create(T).prefix(prefix + "-"))) {
          read.add(r.getKey().toStringUtf8());
        }
        assertTrue(read(c), "the final read of the register through " + via.name + " answered");
      }
      List<String> missing = acked.stream().filter(k -> !read.contains(k)).toList();
      System.out.printf("%d rows acknowledged, %d read back%n", acked.size(), read.size());
      assertTrue(missing.isEmpty(), missing.size() + " acknowledged rows are missing: "
          + missing.stream().limit(20).toList());
      System.out.println("register history: " + history.check());
    }
  }
}
