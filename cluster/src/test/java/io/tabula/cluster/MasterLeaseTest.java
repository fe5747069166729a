package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.conformance.ConformancePeer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two nodes pointed at one data directory cannot both be master: the second cannot take
 * the master lease (an OS file lock in the data directory), so it never sees a master and
 * gives up starting, while the first keeps serving.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MasterLeaseTest {
  @TempDir
  Path dir;

  @Test
  void aSecondNodeOnTheSameDataDirectoryDoesNotBecomeMaster() throws Exception {
    try (TabulaNode first = TabulaNode.start(dir, 0, 0)) {
      IllegalStateException refused = assertThrows(IllegalStateException.class, () -> TabulaNode.start(
          ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(), "tabula.node.grpc-port", 0,
              "tabula.node.http-port", 0, "tabula.node.id", "node2", "tabula.node.master-start-timeout", "5s"))));
      assertTrue(refused.getMessage().contains("master lease"), refused.getMessage());
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(
          ConformancePeer.adminSettings(first.grpcPort()))) {
        assertEquals(List.of(), admin.listTables(), "the first node still serves");
      }
    }
  }
}
