package io.tabula.actors.lease;

import static io.tabula.actors.lease.FileLeaseTest.acquireWithin;
import static io.tabula.actors.lease.FileLeaseTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.tabula.testing.PostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PostgresLease} and the master journal's fence against a real PostgreSQL server the
 * test starts ({@link PostgresServer}), with holders in separate processes that are killed
 * ({@code kill -9}) and frozen ({@code SIGSTOP}).
 */
class PostgresLeaseTest {
  /** An event row as pekko-persistence-jdbc writes one (the payload does not matter to the fence). */
  static final String INSERT_EVENT = "INSERT INTO event_journal (persistence_id, sequence_number, writer, "
      + "write_timestamp, event_ser_id, event_ser_manifest, event_payload) VALUES ('tabula-master', ?, ?, 0, 1, '', "
      + "'\\x00'::bytea)";

  @TempDir
  static Path base;
  private static PostgresServer pg;
  private static int names;

  @BeforeAll
  static void startPostgres() throws Exception {
    pg = PostgresServer.start(base.resolve("pg"));
  }

  @AfterAll
  static void stopPostgres() {
    if (pg != null) {
      pg.close();
    }
  }

  /** Settings as LeaseProvider builds them from a lease section, with quick timings. */
  static LeaseSettings settings(String url, String leaseName, String owner) {
    Config config = ConfigFactory.parseString("""
        lease-class = "io.tabula.actors.lease.PostgresLease"
        heartbeat-timeout = 2s
        heartbeat-interval = 400ms
        lease-operation-timeout = 5s
        postgres { user = "tabula", password = "" }
        """).withValue("postgres.url", ConfigValueFactory.fromAnyRef(url));
    return LeaseSettings.apply(config, leaseName, owner);
  }

  /** As {@link #settings(String, String, String)}, with these timings. */
  static LeaseSettings settings(String url, String leaseName, String owner, String timeout, String interval) {
    return LeaseSettings.apply(settings(url, leaseName, owner).leaseConfig()
        .withValue("heartbeat-timeout", ConfigValueFactory.fromAnyRef(timeout))
        .withValue("heartbeat-interval", ConfigValueFactory.fromAnyRef(interval)), leaseName, owner);
  }

  /** A connection that writes to the journal for {@code owner} under {@code lease}, as a node's journal pool does. */
  static Connection journalConnection(String url, String lease, String owner) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", PostgresServer.USER);
    Connection c = DriverManager.getConnection(url, p);
    try (PreparedStatement s = c.prepareStatement(
        "SELECT set_config('tabula.lease', ?, false), set_config('tabula.owner', ?, false)")) {
      s.setString(1, lease);
      s.setString(2, owner);
      s.execute();
    }
    return c;
  }

  private static String name() {
    return "tabula-master-" + ++names;
  }

  private static PostgresLease lease(String name, String owner) {
    return new PostgresLease(settings(pg.url(), name, owner));
  }

  @Test
  void oneHolderAtATimeAndReleaseLetsAnotherTakeItAtOnce() throws Exception {
    String name = name();
    PostgresLease a = lease(name, "node-a:7355");
    PostgresLease b = lease(name, "node-b:7355");
    assertFalse(a.checkLease());
    assertTrue(await(a.acquire()));
    assertTrue(a.checkLease());
    assertTrue(await(a.acquire()), "reentrant for the holder");
    Thread.sleep(3_000); // past the timeout: the renewals keep it
    assertFalse(await(b.acquire()), "renewed, so not expired");
    assertTrue(a.checkLease());
    assertTrue(await(a.release()));
    assertFalse(a.checkLease());
    assertFalse(await(a.release()), "nothing left to release");
    assertTrue(await(b.acquire()), "a released lease is taken without waiting for it to expire");
    try (Connection c = journalConnection(pg.url(), "", "");
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT owner, generation FROM tabula_lease WHERE name = '" + name + "'")) {
      assertTrue(r.next());
      assertEquals("node-b:7355", r.getString(1), "the holder's name is there for operators");
      assertEquals(2, r.getLong(2));
    }
    assertTrue(await(b.release()));
  }

  @Test
  void aKilledHoldersLeaseIsTakenAtOnceBecauseItsSessionEnded() throws Exception {
    String name = name();
    PostgresLease here = new PostgresLease(settings(pg.url(), name, "here", "8s", "1s"));
    try (FileLeaseTest.Holder other = FileLeaseTest.Holder.start("postgres", pg.url(), name, "other-process")) {
      assertEquals("ACQUIRED", other.firstLine());
      assertFalse(await(here.acquire()));
      other.kill();
      long ms = acquireWithin(here, 3_000);
      assertTrue(here.checkLease());
      System.out.printf("PostgresLeaseTest: a killed holder's lease was taken %d ms after the kill (timeout 8 s)%n",
          ms);
    } finally {
      await(here.release());
    }
  }

  /**
   * A holder is frozen while it holds the lease and writes to the journal; another takes the
   * lease once it expires by the database's clock. Resumed, the old holder reports the loss,
   * and its next journal write is refused by the fence, while the new holder's goes in.
   */
  @Test
  void aFrozenHolderIsWaitedOutAndFencedFromTheJournalWhenItResumes() throws Exception {
    String name = name();
    PostgresLease here = lease(name, "here");
    try (FileLeaseTest.Holder other = FileLeaseTest.Holder.start("postgres", pg.url(), name, "other-process")) {
      assertEquals("ACQUIRED", other.firstLine());
      other.send("write 1");
      assertEquals("WRITTEN 1", other.nextLine(), "the holder writes to the journal");
      other.signal("STOP");
      try {
        assertFalse(await(here.acquire()), "a frozen holder's session stays: it is waited out");
        long ms = acquireWithin(here, 8_000);
        assertTrue(ms >= 1_000, "taken only once expired: " + ms + " ms");
        assertTrue(here.checkLease());
        System.out.printf("PostgresLeaseTest: a frozen holder's lease was taken %d ms after the freeze (timeout 2 s)%n",
            ms);
      } finally {
        other.signal("CONT");
      }
      assertTrue(other.nextLine().startsWith("LOST"), "the resumed holder reports the loss");
      other.send("write 2");
      assertEquals("REFUSED TB001", other.nextLine(), "the fence refuses the old holder's journal write");
      try (Connection mine = journalConnection(pg.url(), name, "here");
          PreparedStatement s = mine.prepareStatement(INSERT_EVENT)) {
        s.setLong(1, 1_000_000L + names);
        s.setString(2, "here");
        assertEquals(1, s.executeUpdate(), "the new holder writes");
      }
      Thread.sleep(1_000);
      assertTrue(here.checkLease(), "the resumed holder did not take it back");
    } finally {
      await(here.release());
    }
  }

  /**
   * The holder's database session ends without the holder knowing (an operator's
   * pg_terminate_backend, a server restart): another may take the lease at once, so the
   * holder must count its next failed renewal as a loss, not wait for the timeout.
   */
  @Test
  void aHolderWhoseSessionEndedCountsTheLeaseLostAtItsNextRenewal() throws Exception {
    String name = name();
    PostgresLease a = lease(name, "node-a");
    PostgresLease b = lease(name, "node-b");
    java.util.concurrent.CompletableFuture<String> lost = new java.util.concurrent.CompletableFuture<>();
    assertTrue(await(a.acquire(why -> lost.complete(why.map(Throwable::getMessage).orElse("")))));
    try (Connection c = journalConnection(pg.url(), "", "");
        PreparedStatement s = c.prepareStatement(
            "SELECT pg_terminate_backend(holder_pid) FROM tabula_lease WHERE name = ?")) {
      s.setString(1, name);
      s.executeQuery().close();
    }
    assertTrue(await(b.acquire()), "the holder's session is gone, so the lease is taken at once");
    String why = lost.get(5, java.util.concurrent.TimeUnit.SECONDS);
    assertTrue(why.contains("lost"), why);
    assertFalse(a.checkLease());
    assertTrue(b.checkLease());
    assertTrue(await(b.release()));
  }

  /**
   * S9 (docs/fencing.md, "The master on PostgreSQL"): the holder's own timeout runs on its
   * monotonic clock (injected here, renewals every 25 s so none comes in between): past the
   * timeout since the last renewal it sent that succeeded, it no longer counts itself the
   * holder, whatever the database's row says. No wall clock of the node is read.
   */
  @Test
  void theHoldersOwnTimeoutRunsOnItsMonotonicClock() throws Exception {
    String name = name();
    java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong();
    PostgresLease here = new PostgresLease(settings(pg.url(), name, "here", "60s", "25s"), clock::get);
    assertTrue(await(here.acquire()));
    try {
      clock.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(60));
      assertTrue(here.checkLease(), "exactly the timeout since the taking: still held");
      clock.addAndGet(1);
      assertFalse(here.checkLease(), "past the timeout on its own clock, with no renewal since");
    } finally {
      await(here.release());
    }
  }

  /**
   * The tables as docs/formats/postgres-tables.md describes them (golden/postgres/tables.txt),
   * and the schema script can run again on a database that has them (every node runs it).
   */
  @Test
  void theSchemaIsTheDocumentedOneAndCanBeAppliedAgain() throws Exception {
    try (Connection c = journalConnection(pg.url(), "", "")) {
      io.tabula.actors.postgres.PostgresSchema.ensure(c);
      io.tabula.actors.postgres.PostgresSchema.ensure(c);
      StringBuilder got = new StringBuilder();
      try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("""
          SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
          WHERE table_schema = current_schema()
            AND table_name IN ('event_journal', 'event_tag', 'snapshot', 'tabula_lease')
          ORDER BY table_name, ordinal_position""")) {
        while (r.next()) {
          got.append(r.getString(1)).append('.').append(r.getString(2)).append(' ').append(r.getString(3))
              .append(' ').append(r.getString(4)).append('\n');
        }
      }
      String golden;
      try (var in = PostgresLeaseTest.class.getResourceAsStream("/golden/postgres/tables.txt")) {
        golden = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      }
      assertEquals(golden, got.toString());
      try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(
          "SELECT count(*) FROM pg_trigger WHERE tgname = 'tabula_fence'")) {
        assertTrue(r.next());
        assertEquals(2, r.getInt(1), "the fence guards the journal and the snapshots");
      }
    }
  }

  @Test
  void anUnreachableDatabaseFailsTheAcquireNamingIt() throws Exception {
    PostgresLease nowhere = new PostgresLease(settings("jdbc:postgresql://127.0.0.1:1/tabula", name(), "x"));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
        () -> await(nowhere.acquire()));
    LeaseException cause = assertInstanceOf(LeaseException.class, e.getCause() instanceof CompletionException c
        ? c.getCause() : e.getCause());
    assertTrue(cause.getMessage().contains("127.0.0.1:1"), cause.getMessage());
  }
}
