package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's journal on pekko-persistence-jdbc with a database other than PostgreSQL (H2,
 * the default url; MySQL...) has no fence: nothing refuses the writes of a master that lost
 * its lease, so the single-writer argument of docs/fencing.md would rest on the lease alone
 * (hole S3 of the fencing review). A node that can be in a cluster refuses to start on it
 * unless {@code tabula.master.allow-unfenced-journal} says the operator accepts that; a node
 * that cannot (no seeds, no bootstrap, a cluster port picked at random) may run on it.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class UnfencedJournalTest {
  @TempDir
  Path dir;

  /** A node on the jdbc journal with H2 (the default url) and a fixed cluster port, which others can join, is refused. */
  @Test
  void aNodeOthersCanJoinIsRefusedTheJdbcJournalOnH2() {
    StartRefusedException e = assertThrows(StartRefusedException.class, () -> TabulaNode.start(ConfigFactory.parseMap(
        node(Map.of("tabula.node.cluster-port", NodeProcess.freePort())))).close());
    assertEquals(StartRefusedException.Reason.UNFENCED_JOURNAL, e.reason(), e::getMessage);
  }

  @Test
  void theDecisionFollowsTheDatabaseWhetherOthersCanJoinAndTheOperatorsSetting() {
    List<Map<String, Object>> refused = List.of(
        Map.of("tabula.node.cluster-port", 2552),
        Map.of("tabula.node.join", List.of("10.0.0.1:2552")),
        Map.of("tabula.node.join-by", "bootstrap"),
        Map.of("pekko.cluster.seed-nodes", List.of("pekko://tabula@10.0.0.1:2552")),
        Map.of("tabula.node.cluster-port", 2552,
            "pekko-persistence-jdbc.shared-databases.tabula.db.url", "jdbc:mysql://db:3306/tabula"));
    for (Map<String, Object> settings : refused) {
      StartRefusedException e = assertThrows(StartRefusedException.class, () -> check(settings), settings::toString);
      assertEquals(StartRefusedException.Reason.UNFENCED_JOURNAL, e.reason(), e::getMessage);
    }
    List<Map<String, Object>> accepted = List.of(
        Map.of(),
        Map.of("tabula.node.cluster-port", 2552, "tabula.master.allow-unfenced-journal", true),
        Map.of("tabula.node.cluster-port", 2552,
            "pekko-persistence-jdbc.shared-databases.tabula.db.url", "jdbc:postgresql://db:5432/tabula"),
        Map.of("tabula.node.cluster-port", 2552, "tabula.master.journal-plugin", "tabula.master-journal",
            "tabula.master.snapshot-plugin", "tabula.master-snapshots"));
    for (Map<String, Object> settings : accepted) {
      check(settings);
    }
  }

  /** The node settings of a test: the jdbc journal, its url left to the node (an H2 file), and {@code more}. */
  private Map<String, Object> node(Map<String, Object> more) {
    Map<String, Object> c = new HashMap<>(Map.of("tabula.node.data-dir", dir.toString(), "tabula.node.grpc-port", 0,
        "tabula.node.http-port", 0, "tabula.master.journal-plugin", "jdbc-journal",
        "tabula.master.snapshot-plugin", "jdbc-snapshot-store"));
    c.putAll(more);
    return c;
  }

  /** The start check on the configuration a node would run with. */
  private void check(Map<String, Object> settings) {
    Config full = TabulaNode.embeddedConfig(ConfigFactory.parseMap(node(settings)));
    MasterJournalSetup.checkFenced(full, NodeSettings.from(full.getConfig("tabula.node")));
  }
}
