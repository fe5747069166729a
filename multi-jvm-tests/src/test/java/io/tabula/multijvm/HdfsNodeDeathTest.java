package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.MiniHdfs;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Three nodes whose storage root is HDFS (a real namenode and datanode in the test's JVM,
 * on 127.0.0.1): one is killed ({@code kill -9}) under writes, and its tablets serve on the
 * other two with every acknowledged write. Fencing its commit log here is HDFS lease
 * recovery of each of its files ({@code HdfsStorage.fence}); the master's journal is on
 * HDFS too. Prints how long after the kill the tablets served again.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class HdfsNodeDeathTest {
  @Test
  void aKilledNodesTabletsServeElsewhereOnHdfs() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      MiniHdfs hdfs = cluster.service(MiniHdfs.start(cluster.root.resolve("hdfs")));
      cluster.configure("tabula.node.storage-uri = \"" + hdfs.uri() + "/tabula\"\n");
      long served = NodeDeathTest.killOneUnderLoad(cluster, List.of("n1", "n2", "n3"), "n3");
      assertTrue(cluster.node("n1").tail(1_000_000).contains("HdfsStorage"),
          "the nodes ran on HDFS (the node logs its storage at start)");
      assertTrue(served < 45_000, "the killed node's tablets took " + served + " ms to serve again on HDFS");
    }
  }
}
