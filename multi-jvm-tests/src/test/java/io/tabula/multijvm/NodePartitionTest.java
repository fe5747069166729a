package io.tabula.multijvm;

import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node is cut off from the other nodes' remoting traffic, both ways, while its clients still
 * reach it over gRPC: a partition, not a crash. The node keeps running and keeps taking
 * requests. The majority's master fences its commit log and places its tablets on the others;
 * the cut-off node must acknowledge no write that recovery did not see and answer no read from
 * its stale copies, and it stops (fenced, or downed by its own split-brain resolver as the
 * minority). Then the partition heals. The checks are those of {@link NodeFreezeTest}; the
 * cut is {@link PartitionSwitch} (Pekko Artery's test-mode blackhole, in n3 only).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class NodePartitionTest {
  @Test
  void aNodeCutOffFromTheOthersIsFencedAndStopsWithNoAcknowledgedWriteLost() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.add("n1");
      cluster.add("n2");
      cluster.configure("""
          pekko.remote.artery.advanced.test-mode = on
          pekko.extensions += "io.tabula.multijvm.PartitionSwitch$Id"
          """);
      cluster.add("n3");
      cluster.configure("");
      cluster.add("n4");
      IsolatedNodeScenario.run(cluster, "cut off from the other nodes", new IsolatedNodeScenario.Fault() {
        @Override
        public void start(ClusterFixture c, NodeJvm n3) throws Exception {
          Files.createFile(PartitionSwitch.switchFile(c.data, "n3"));
        }

        @Override
        public void end(ClusterFixture c, NodeJvm n3) throws Exception {
          Files.delete(PartitionSwitch.switchFile(c.data, "n3"));
        }
      });
    }
  }
}
