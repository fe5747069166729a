package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The PostgreSQL profile ({@code config/postgres.conf}) refuses to start a node whose journal
 * would go unfenced: one whose master lease is not the PostgreSQL lease (the fence is the
 * lease's row), or whose cluster port is left to chance (the fence names the node by it). No
 * database is needed to see the refusals: they come before the node connects. The profile
 * working end to end is {@code HdfsPostgresMasterDeathTest}'s part.
 */
class PostgresProfileTest {
  private static final Path PROFILE = Path.of("..", "config", "postgres.conf");

  @TempDir
  Path dir;

  private Config profile(Map<String, Object> overrides) {
    return ConfigFactory.parseMap(overrides).withFallback(ConfigFactory.parseMap(Map.of(
        "tabula.node.data-dir", dir.toString(), "tabula.node.grpc-port", 0, "tabula.node.http-port", 0,
        "tabula.postgres.url", "jdbc:postgresql://127.0.0.1:1/tabula"))).withFallback(
        ConfigFactory.parseFile(PROFILE.toFile()));
  }

  /**
   * Both PostgreSQL profiles put the master's journal in PostgreSQL by naming it for the master,
   * and leave the actor system's default journal unset (an embedding application's).
   */
  @Test
  void bothProfilesGiveTheMasterTheJdbcJournalAndLeaveTheDefaultAlone() {
    for (String file : List.of("postgres.conf", "hdfs-postgres.conf")) {
      Config c = TabulaNode.configuration(ConfigFactory.parseFile(PROFILE.resolveSibling(file).toFile()));
      assertEquals("jdbc-journal", c.getString("tabula.master.journal-plugin"), file);
      assertEquals("jdbc-snapshot-store", c.getString("tabula.master.snapshot-plugin"), file);
      assertEquals("", c.getString("pekko.persistence.journal.plugin"), file);
      assertEquals("", c.getString("pekko.persistence.snapshot-store.plugin"), file);
      assertTrue(c.getString("pekko-persistence-jdbc.shared-databases.tabula.db.url").startsWith("jdbc:postgresql:"),
          file);
    }
  }

  @Test
  void aPostgresJournalWithAnotherLeaseIsRefused() {
    RuntimeException e = assertThrows(RuntimeException.class, () -> TabulaNode.start(profile(Map.of(
        "tabula.master-lease.lease-class", "io.tabula.actors.lease.FileLease"))).close());
    assertTrue(String.valueOf(e.getMessage()).contains("PostgresLease"), e.toString());
  }

  @Test
  void aPostgresJournalNeedsAFixedClusterPort() {
    RuntimeException e = assertThrows(RuntimeException.class, () -> TabulaNode.start(profile(Map.of(
        "tabula.node.cluster-port", 0))).close());
    assertTrue(String.valueOf(e.getMessage()).contains("cluster-port"), e.toString());
  }
}
