package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node freezes ({@code SIGSTOP}) past failure detection while clients write through every
 * node, the frozen one included, and readers by key read through it and through another:
 * the master fences its commit log and places its tablets on the others, which serve them.
 * Then the node resumes ({@code SIGCONT}): it finds its log fenced (or itself downed) and
 * stops, acknowledging nothing recovery did not see and answering no read from its stale
 * copies (every read that answers holds every row acknowledged before it began). Every
 * acknowledged write reads back; a write that failed may or may not be there; nothing else
 * is. The argument is in docs/fencing.md.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class NodeFreezeTest {
  @Test
  void aFrozenNodeIsFencedAndStopsWhenItResumesWithNoAcknowledgedWriteLost() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      for (String n : List.of("n1", "n2", "n3", "n4")) {
        cluster.add(n);
      }
      NodeJvm n1 = cluster.node("n1");
      NodeJvm n3 = cluster.node("n3");
      Workload load = Workload.create(cluster, n1, 8, 400);
      Map<String, String[]> before = Workload.awaitPlacement(n1, Set.of("n1", "n2", "n3", "n4"),
          Duration.ofSeconds(60), t -> t.values().stream().anyMatch(o -> o[0].equals("n3")));
      List<Integer> frozen = new ArrayList<>();
      int range = 0;
      for (String[] owner : before.values()) {
        if (owner[0].equals("n3")) {
          frozen.add(range);
        }
        range++;
      }
      load.startThroughFailures(List.of(n1, cluster.node("n2"), n3, cluster.node("n4")))
          .withReaderThroughFailures(n3).withReaderThroughFailures(cluster.node("n2"));
      try {
        Thread.sleep(2_000);
        long stoppedAt = System.nanoTime();
        n3.signal("STOP");
        Workload.awaitPlacement(n1, Set.of("n1", "n2", "n4"), Duration.ofSeconds(60), t -> true);
        load.awaitReadable(cluster.node("n2"), frozen, Duration.ofSeconds(60));
        System.out.printf("the frozen node n3's %d tablets served elsewhere %d ms after SIGSTOP%n", frozen.size(),
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt));
        Thread.sleep(3_000);
        long resumedAt = System.nanoTime();
        n3.signal("CONT");
        assertTrue(n3.awaitExit(Duration.ofSeconds(60)), "n3 still runs 60 s after it resumed; its log:\n"
            + n3.tail(60));
        System.out.printf("n3 stopped %d ms after SIGCONT%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumedAt));
        Thread.sleep(2_000);
      } finally {
        load.stop();
      }
      String log = n3.tail(400);
      assertTrue(log.contains("is fenced") || log.contains("Down"), "n3 stopped because it was fenced or "
          + "downed; its log:\n" + n3.tail(60));
      load.verify(cluster.node("n2"));
    }
  }
}
