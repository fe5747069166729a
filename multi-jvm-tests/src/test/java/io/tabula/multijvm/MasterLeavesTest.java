package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Scenario 6: the node holding the master (the oldest, n1) leaves gracefully under load.
 * Its tablets move away first; the master singleton starts on another node, recovers the
 * directory (tables, tablets, owners) from the journal, and works: it places and moves
 * tablets. Writers and a scanner through the other nodes keep going throughout; nothing is
 * lost.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class MasterLeavesTest {
  @Test
  void theMasterMovesAndTheClusterKeepsServing() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      NodeJvm n1 = cluster.node("n1");
      NodeJvm n2 = cluster.node("n2");
      Workload load = Workload.create(cluster, n2, 6, 300).start(List.of(n2, cluster.node("n3")), n2);
      long left;
      try {
        Thread.sleep(1_000);
        assertTrue(n1.logContains("Singleton manager starting singleton actor "
            + "[pekko://tabula/system/singletonManagermaster/master]"), "n1, the oldest, runs the master");
        long t0 = System.nanoTime();
        assertTrue(n1.terminate(Duration.ofSeconds(90)), "n1 did not stop within 90 s of SIGTERM");
        left = System.nanoTime();
        System.out.printf("n1 (the master's node) drained and stopped %d ms after SIGTERM%n",
            TimeUnit.NANOSECONDS.toMillis(left - t0));
        // The master records the drain's moves while n1 stops: its journal must still be open then.
        assertFalse(n1.tail(1_000_000).contains("Failed to persist"), "the master on the stopping node could not "
            + "write its journal:\n" + n1.tail(60));
        Map<String, String[]> placed = Workload.awaitPlacement(n2, Set.of("n2", "n3"), Duration.ofSeconds(60),
            t -> true);
        // The new master works: it moves a tablet.
        String id = placed.keySet().iterator().next();
        String to = placed.get(id)[0].equals("n2") ? "n3" : "n2";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int status;
        do {
          status = n2.post("/tabula/tablets/" + id + "/move?to=" + to).statusCode();
          if (status != 202) {
            Thread.sleep(500);
          }
        } while (status != 202 && System.nanoTime() < deadline);
        assertEquals(202, status, "the new master accepts a move");
        Workload.awaitPlacement(n2, Set.of("n2", "n3"), Duration.ofSeconds(60), t -> t.get(id)[0].equals(to));
        System.out.printf("the new master moved tablet %s %d ms after n1 stopped%n", id,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - left));
        Thread.sleep(1_000);
      } finally {
        load.stop();
      }
      load.verify(cluster.node("n3"));
      System.out.printf("longest write while the master moved: %d ms%n", load.longestWriteMs(-1, left - 
          TimeUnit.SECONDS.toNanos(30), System.nanoTime()));
    }
  }
}
