package io.tabula.multijvm;

import java.util.List;
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
 * is. The argument is in docs/fencing.md; the body is {@link IsolatedNodeScenario}.
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
      IsolatedNodeScenario.run(cluster, "frozen (SIGSTOP)", new IsolatedNodeScenario.Fault() {
        @Override
        public void start(ClusterFixture c, NodeJvm n3) throws Exception {
          n3.signal("STOP");
        }

        @Override
        public void end(ClusterFixture c, NodeJvm n3) throws Exception {
          n3.signal("CONT");
        }
      });
    }
  }
}
