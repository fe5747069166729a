package io.tabula.actors.lease;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tabula.actors.postgres.PostgresSchema;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Pekko coordination {@link Lease} kept in a PostgreSQL table ({@code tabula_lease}, created
 * with the rest of {@link PostgresSchema}), for a cluster on several machines: the paper's
 * Chubby lock, with the database as the lock service.
 *
 * <p>How it works. A row per lease holds its owner, a generation (one per taking), an expiry
 * and the database session of its holder. Taking the lease is one statement that succeeds only
 * if the row is absent, released, expired <em>by the database's clock</em>, or held by a
 * session that no longer exists (the holder's process died and its connection with it, so a
 * {@code kill -9}ed holder is replaced at once, while a frozen one, whose connection stays
 * open, is waited out). The holder renews every {@code heartbeat-interval}, pushing the expiry
 * to the database's now plus {@code heartbeat-timeout}; a renewal that finds a newer
 * generation means the lease is lost. The holder also counts it lost once {@code
 * heartbeat-timeout} has passed on its own monotonic clock since the last renewal it
 * <em>sent</em> that succeeded: the database's expiry is at least that late, so the holder
 * gives up before anyone may take over, and no two clocks are compared, only their rates. The
 * expiry is written and judged by the database's clock alone ({@code clock_timestamp()} in
 * every statement), so no node's wall clock counts. A step forward of the database's clock by
 * more than the timeout less a renewal interval can let another node take a healthy holder's
 * lease; the holder finds out at its next renewal, at most an interval later, as after a
 * freeze.
 *
 * <p>What it promises: two holders at once only until the old holder's next renewal or
 * watchdog tick (at most a renewal interval) after it was frozen past the timeout or its
 * session ended without its knowing; a renewal that fails is a loss at once, since another
 * may take the lease as soon as the holder's session is gone. The master's journal in the same
 * database is fenced by the lease row itself (a trigger, {@code tabula-schema.sql}), so a stale
 * master's writes are refused whatever it believes.
 *
 * <p>Settings, beside the usual lease timings, under {@code postgres} in the lease's section:
 * {@code url}, {@code user}, {@code password} (see {@code config/hdfs-postgres.conf}).
 *
 * <p>Threads: every database call runs on this instance's own thread (owner of {@link #conn}),
 * never on the caller's, so an actor asking for the lease never blocks. The fields under
 * {@code this} are read by {@link #checkLease} from any thread.
 */
public final class PostgresLease extends Lease {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresLease.class);

  private static final String TAKE = """
      INSERT INTO tabula_lease AS l (name, owner, generation, expires_at, holder_pid, released, taken_at)
      VALUES (?, ?, 1, clock_timestamp() + make_interval(secs => ?), pg_backend_pid(), false, clock_timestamp())
      ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, generation = l.generation + 1,
        expires_at = EXCLUDED.expires_at, holder_pid = EXCLUDED.holder_pid, released = false,
        taken_at = EXCLUDED.taken_at
      WHERE l.released OR l.expires_at < clock_timestamp()
        OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.holder_pid)
      RETURNING generation""";
  private static final String RENEW = """
      UPDATE tabula_lease SET expires_at = clock_timestamp() + make_interval(secs => ?), holder_pid = pg_backend_pid()
      WHERE name = ? AND owner = ? AND generation = ? AND NOT released""";
  private static final String RELEASE = """
      UPDATE tabula_lease SET released = true WHERE name = ? AND owner = ? AND generation = ? AND NOT released""";

  private final LeaseSettings settings;
  private final String url;
  private final Properties login;
  private final long timeoutNanos;
  private final long intervalNanos;
  /** This process's monotonic clock: the holder's own timeout. */
  private final LongSupplier nanoTime;
  private final ScheduledExecutorService thread;

  /** Owned by {@link #thread}; null until connected, and after a failure until the next call. */
  private Connection conn;
  /** Owned by {@link #thread}: whether this instance has made sure the schema exists. */
  private boolean schemaReady;

  @GuardedBy("this")
  private long generation; // held, or 0
  @GuardedBy("this")
  private long renewedAt; // nanoTime when the last successful renewal (or the taking) was sent
  @GuardedBy("this")
  private ScheduledFuture<?> renewals;
  @GuardedBy("this")
  private ScheduledFuture<?> watchdog;
  @GuardedBy("this")
  private Consumer<Optional<Throwable>> leaseLostCallback;

  /** Fires a holder's loss once its timeout has passed without a renewal, even if its own thread is stuck in a call. */
  private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "postgres-lease-watchdog");
    t.setDaemon(true);
    return t;
  });

  /** The constructor Pekko's {@code LeaseProvider} calls: the lease stops with the actor system. */
  public PostgresLease(LeaseSettings settings, ExtendedActorSystem system) {
    this(settings);
    system.registerOnTermination(this::shutdown);
  }

  /** For use without an actor system (tools, tests): the same lease. */
  public PostgresLease(LeaseSettings settings) {
    this(settings, System::nanoTime);
  }

  /** As {@link #PostgresLease(LeaseSettings)}, with the holder's timeout on the monotonic clock {@code nanoTime}. */
  PostgresLease(LeaseSettings settings, LongSupplier nanoTime) {
    this.settings = settings;
    this.timeoutNanos = settings.timeoutSettings().heartbeatTimeout().toNanos();
    this.intervalNanos = settings.timeoutSettings().heartbeatInterval().toNanos();
    this.nanoTime = nanoTime;
    LeaseSupport.checkTimings(settings);
    var c = settings.leaseConfig();
    if (!c.hasPath("postgres.url") || c.getString("postgres.url").isBlank()) {
      throw new IllegalArgumentException("lease [" + settings.leaseName() + "]: postgres.url is not set (a JDBC URL "
          + "such as jdbc:postgresql://db:5432/tabula)");
    }
    this.url = c.getString("postgres.url");
    this.login = new Properties();
    login.setProperty("user", c.hasPath("postgres.user") ? c.getString("postgres.user") : "");
    login.setProperty("password", c.hasPath("postgres.password") ? c.getString("postgres.password") : "");
    // A call that hangs (the database or the network stalled) gives up within the timeout, so
    // the lease thread always comes back to find out whether the lease is still held.
    long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) / 2);
    login.setProperty("connectTimeout", Long.toString(seconds));
    login.setProperty("socketTimeout", Long.toString(seconds));
    login.setProperty("tcpKeepAlive", "true");
    login.setProperty("ApplicationName", "tabula lease");
    this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "lease-" + settings.leaseName());
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public LeaseSettings getSettings() {
    return settings;
  }

  @Override
  public CompletionStage<Boolean> acquire() {
    return CompletableFuture.supplyAsync(this::tryAcquire, thread);
  }

  /**
   * As {@link #acquire()}, and keeps {@code leaseLostCallback} until {@link #release()} or the
   * loss it reports, which it reports once.
   */
  @Override
  public CompletionStage<Boolean> acquire(Consumer<Optional<Throwable>> leaseLostCallback) {
    synchronized (this) {
      this.leaseLostCallback = leaseLostCallback;
    }
    return acquire();
  }

  /** Completes with {@code true} if this instance held the lease and marked it released, so another may take it at once. */
  @Override
  public CompletionStage<Boolean> release() {
    return CompletableFuture.supplyAsync(() -> {
      long g;
      synchronized (this) {
        leaseLostCallback = null;
        g = generation;
        stopHolding();
      }
      if (g == 0) {
        return false;
      }
      try (PreparedStatement s = connection().prepareStatement(RELEASE)) {
        s.setString(1, settings.leaseName());
        s.setString(2, settings.ownerName());
        s.setLong(3, g);
        return s.executeUpdate() == 1;
      } catch (SQLException e) {
        dropConnection();
        throw failure("could not be marked released (it expires instead)", e);
      }
    }, thread);
  }

  /**
   * Whether this instance holds the lease: it took it, and its last successful renewal was
   * sent within the timeout (by this process's monotonic clock). Asks nothing of the database.
   */
  @Override
  public boolean checkLease() {
    synchronized (this) {
      return generation != 0 && nanoTime.getAsLong() - renewedAt <= timeoutNanos;
    }
  }

  /** On the lease thread. */
  private boolean tryAcquire() {
    synchronized (this) {
      if (generation != 0) {
        return true; // reentrant; a loss is found by the renewals
      }
    }
    long sent = nanoTime.getAsLong();
    long g;
    try (PreparedStatement s = connection().prepareStatement(TAKE)) {
      s.setString(1, settings.leaseName());
      s.setString(2, settings.ownerName());
      s.setDouble(3, timeoutNanos / 1e9);
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          return false;
        }
        g = r.getLong(1);
      }
    } catch (SQLException e) {
      dropConnection();
      throw failure("could not be taken", e);
    }
    synchronized (this) {
      generation = g;
      renewedAt = sent;
      renewals = thread.scheduleWithFixedDelay(this::renew, intervalNanos, intervalNanos, TimeUnit.NANOSECONDS);
      watchdog = WATCHDOG.scheduleWithFixedDelay(() -> expireIfStale(g), intervalNanos, intervalNanos / 4,
          TimeUnit.NANOSECONDS);
    }
    LOG.info("lease [{}] taken by {} as generation {}", settings.leaseName(), settings.ownerName(), g);
    return true;
  }

  /**
   * One renewal, on the lease thread: pushes the expiry on, or finds a loss. (A renewal that
   * comes too late is the watchdog's to report, {@link #expireIfStale}; one that succeeds late
   * found the row still this generation's, so nobody took the lease meanwhile.)
   */
  private void renew() {
    long g;
    long sent = nanoTime.getAsLong();
    synchronized (this) {
      g = generation;
      if (g == 0) {
        return;
      }
    }
    String why;
    try (PreparedStatement s = connection().prepareStatement(RENEW)) {
      s.setDouble(1, timeoutNanos / 1e9);
      s.setString(2, settings.leaseName());
      s.setString(3, settings.ownerName());
      s.setLong(4, g);
      if (s.executeUpdate() == 1) {
        synchronized (this) {
          if (generation == g) {
            renewedAt = sent;
          }
        }
        return;
      }
      why = "taken by a newer holder, or released";
    } catch (SQLException e) {
      // The holder's session may be gone with its connection, and a session that is gone lets
      // another take the lease at once: so a renewal that fails is a loss, now.
      dropConnection();
      why = "a renewal failed (" + e.getMessage() + "), and without its database session the lease may be "
          + "taken by another";
    }
    lose(g, why);
  }

  /** On the watchdog thread: the loss, if generation {@code g} has gone unrenewed past the timeout. */
  private void expireIfStale(long g) {
    long now = nanoTime.getAsLong();
    long since;
    synchronized (this) {
      if (generation != g || now - renewedAt <= timeoutNanos) {
        return;
      }
      since = now - renewedAt;
    }
    lose(g, "not renewed for " + Duration.ofNanos(since).toMillis() + " ms (the process was paused or the "
        + "database was slow or out of reach), so another may hold it");
  }

  /** Stops holding generation {@code g} (unless that happened already) and reports the loss once. */
  private void lose(long g, String why) {
    Consumer<Optional<Throwable>> lost;
    synchronized (this) {
      if (generation != g) {
        return; // released or lost meanwhile
      }
      lost = leaseLostCallback;
      leaseLostCallback = null;
      stopHolding();
    }
    LeaseSupport.reportLost(LOG, settings, lost, why);
  }

  /** The actor system ended: stop renewing (the lease expires), close the connection and the thread. */
  private void shutdown() {
    synchronized (this) {
      leaseLostCallback = null;
      stopHolding();
    }
    thread.execute(this::dropConnection);
    thread.shutdown();
  }

  @GuardedBy("this")
  private void stopHolding() {
    generation = 0;
    if (renewals != null) {
      renewals.cancel(false);
      renewals = null;
    }
    if (watchdog != null) {
      watchdog.cancel(false);
      watchdog = null;
    }
  }

  /** The lease thread's connection, opened (and the schema ensured, once) if needed. */
  private Connection connection() throws SQLException {
    if (conn == null || conn.isClosed()) {
      conn = DriverManager.getConnection(url, login);
      if (!schemaReady) {
        PostgresSchema.ensure(conn);
        schemaReady = true;
      }
    }
    return conn;
  }

  private void dropConnection() {
    if (conn != null) {
      try {
        conn.close();
      } catch (SQLException e) {
        LOG.debug("closing the lease's connection failed", e);
      }
      conn = null;
    }
  }

  private LeaseException failure(String what, SQLException e) {
    LeaseException f = new LeaseException("lease [" + settings.leaseName() + "] " + what + " in " + url + ": "
        + e.getMessage());
    f.initCause(e);
    return f;
  }
}
