package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Scenario 4: nodes drain and stop under load. One is drained on request
 * ({@code POST /tabula/nodes/n4/drain}): its tablets move away, then it leaves the cluster and
 * its process ends. Another gets SIGTERM: its coordinated shutdown moves its tablets away
 * before it stops serving. Their tablets serve elsewhere, every acknowledged write reads
 * back, every scan is whole.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class DrainTest {
  @Test
  void drainedNodesHandTheirTabletsOverBeforeTheyStop() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      for (String n : List.of("n1", "n2", "n3", "n4")) {
        cluster.add(n);
      }
      Workload load = Workload.create(cluster, cluster.node("n1"), 8, 400)
          .start(List.of(cluster.node("n1"), cluster.node("n2")), cluster.node("n1"));
      NodeJvm n3 = cluster.node("n3");
      NodeJvm n4 = cluster.node("n4");
      try {
        Thread.sleep(1_000);
        long t0 = System.nanoTime();
        var answer = cluster.node("n2").post("/tabula/nodes/n4/drain");
        assertEquals(202, answer.statusCode(), answer.body());
        assertTrue(n4.awaitExit(Duration.ofSeconds(90)), "the drained node n4 did not leave and stop");
        System.out.printf("n4 drained and stopped %d ms after the request%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));

        long t1 = System.nanoTime();
        assertTrue(n3.terminate(Duration.ofSeconds(90)), "n3 did not stop within 90 s of SIGTERM");
        System.out.printf("n3 drained and stopped %d ms after SIGTERM%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t1));
        assertTrue(n3.logContains("draining: done"), "n3 moved its tablets away before stopping");
        Workload.awaitPlacement(cluster.node("n1"), Set.of("n1", "n2"), Duration.ofSeconds(60), t -> true);
        Thread.sleep(1_000);
      } finally {
        load.stop();
      }
      load.verify(cluster.node("n2"));
      String nodes = cluster.node("n1").get("/tabula/nodes").body();
      assertFalse(nodes.contains("\"n4\"") || nodes.contains("\"n3\""), nodes);
    }
  }
}
