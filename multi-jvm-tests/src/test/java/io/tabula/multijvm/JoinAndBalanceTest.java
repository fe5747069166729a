package io.tabula.multijvm;

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
 * Scenario 3: a fourth node joins a three-node cluster under load; the master's balancer
 * moves tablets onto it (a join triggers a round) until the counts differ by at most one,
 * while writes and a scan run; nothing acknowledged is lost and every scan is whole.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class JoinAndBalanceTest {
  @Test
  void aJoiningNodeGetsItsShareWhileTheLoadRuns() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      Workload load = Workload.create(cluster, cluster.node("n1"), 8, 400)
          .start(List.of(cluster.node("n1"), cluster.node("n2")), cluster.node("n3"));
      long joined;
      Map<String, String[]> placed;
      try {
        Thread.sleep(1_000);
        cluster.add("n4");
        joined = System.nanoTime();
        placed = Workload.awaitPlacement(cluster.node("n1"), Set.of("n1", "n2", "n3", "n4"), Duration.ofSeconds(90),
            t -> balanced(t, List.of("n1", "n2", "n3", "n4")));
        System.out.printf("balanced onto the new node %d ms after it was ready%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - joined));
        Thread.sleep(1_000);
      } finally {
        load.stop();
      }
      load.verify(cluster.node("n4"));
      assertTrue(placed.values().stream().anyMatch(o -> o[0].equals("n4")), "the new node serves tablets");
      System.out.printf("longest write during the balancing: %d ms%n", load.longestWriteMs(-1, joined,
          System.nanoTime()));
    }
  }

  /** Whether every node of {@code nodes} owns a count within one of every other's. */
  static boolean balanced(Map<String, String[]> tablets, List<String> nodes) {
    int min = Integer.MAX_VALUE;
    int max = 0;
    for (String n : nodes) {
      int c = (int) tablets.values().stream().filter(o -> o[0].equals(n)).count();
      min = Math.min(min, c);
      max = Math.max(max, c);
    }
    return max - min <= 1;
  }
}
