package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.MiniHdfs;
import io.tabula.testing.PostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The production configuration ({@code config/hdfs-postgres.conf}, with only the addresses
 * changed): three nodes with their storage root on HDFS (in the test's JVM) and the master's
 * journal and lease in PostgreSQL (a real server the test starts). The master's node is killed
 * ({@code kill -9}) during splits, merges, moves and writes, as in {@link MasterDeathTest}:
 * a new master takes the PostgreSQL lease, reads the journal there, and every acknowledged
 * write reads back. Afterwards the lease row names the new master's node, and the journal
 * holds the master's events.
 */
@Timeout(value = 7, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class HdfsPostgresMasterDeathTest {
  @Test
  void theMastersNodeDiesOnHdfsAndPostgres() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      MiniHdfs hdfs = cluster.service(MiniHdfs.start(cluster.root.resolve("hdfs")));
      PostgresServer pg = cluster.service(PostgresServer.start(cluster.root.resolve("postgres")));
      Path shipped = Path.of("..", "config", "hdfs-postgres.conf").toAbsolutePath().normalize();
      cluster.configure("include file(\"" + shipped + "\")\n"
          + "tabula.postgres { url = \"" + pg.url() + "\", user = \"" + PostgresServer.USER + "\", password = \"\" }\n"
          + "tabula.node.storage-uri = \"" + hdfs.uri() + "/tabula\"\n"
          + SplitsAndMergesTest.SMALL_TABLETS);
      try {
        MasterDeathTest.killTheMasterDuringChanges(cluster);
      } catch (AssertionError | Exception e) {
        System.out.println("PostgreSQL's log:\n" + pg.logTail(60));
        throw e;
      }
      NodeJvm n2 = cluster.node("n2");
      assertTrue(n2.tail(1_000_000).contains("HdfsStorage"), "the nodes ran on HDFS");
      Properties login = new Properties();
      login.setProperty("user", PostgresServer.USER);
      try (Connection c = DriverManager.getConnection(pg.url(), login); Statement s = c.createStatement()) {
        String owner;
        try (ResultSet r = s.executeQuery("SELECT owner, generation FROM tabula_lease")) {
          assertTrue(r.next(), "the master lease is a row in PostgreSQL");
          owner = r.getString(1);
          Set<String> survivors = Set.of("tabula@127.0.0.1:" + n2.clusterPort,
              "tabula@127.0.0.1:" + cluster.node("n3").clusterPort);
          assertTrue(survivors.contains(owner), "the lease is held by n2's or n3's node now: " + owner);
          assertTrue(r.getLong(2) >= 2, "taken again after the kill: generation " + r.getLong(2));
          System.out.printf("the master lease in PostgreSQL: generation %d, held by %s%n", r.getLong(2), owner);
        }
        try (ResultSet r = s.executeQuery("SELECT count(*) FROM event_journal WHERE persistence_id = 'tabula-master'")) {
          assertTrue(r.next() && r.getLong(1) > 0, "the master's events are in PostgreSQL");
        }
        try (ResultSet r = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
            + "'tabula journal " + owner + "'")) {
          assertTrue(r.next() && r.getLong(1) > 0, "the new master's journal connections name it for the fence");
        }
        // The dead master's identity is fenced out: a change made in its name is refused.
        s.execute("SELECT set_config('tabula.lease', 'tabula-singleton-pekko://tabula/system/singletonManagermaster', "
            + "false), set_config('tabula.owner', 'tabula@127.0.0.1:" + cluster.node("n1").clusterPort + "', false)");
        java.sql.SQLException refused = org.junit.jupiter.api.Assertions.assertThrows(java.sql.SQLException.class,
            () -> s.executeUpdate("UPDATE event_journal SET deleted = deleted WHERE persistence_id = 'tabula-master'"));
        org.junit.jupiter.api.Assertions.assertEquals("TB001", refused.getSQLState(), refused.getMessage());
      }
    }
  }
}
