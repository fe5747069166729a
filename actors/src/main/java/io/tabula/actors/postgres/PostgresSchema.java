package io.tabula.actors.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Tabula's tables in PostgreSQL: the master's journal (as pekko-persistence-jdbc writes it),
 * the leases ({@link io.tabula.actors.lease.PostgresLease}) and the journal's fence. The SQL is
 * {@code tabula-schema.sql} beside this class, idempotent, and run in one transaction under an
 * advisory lock, so nodes starting together create it once.
 */
public final class PostgresSchema {
  /** The advisory lock key that serializes schema creation (an arbitrary constant: "TABULA01"). */
  private static final long LOCK_KEY = 0x5441_4255_4C41_3031L;

  private PostgresSchema() {}

  /** The schema script's text. */
  public static String sql() {
    try (InputStream in = PostgresSchema.class.getResourceAsStream("tabula-schema.sql")) {
      if (in == null) {
        throw new IllegalStateException("tabula-schema.sql is missing from the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Creates whatever of the schema is missing, on {@code c} (left with auto-commit on). */
  public static void ensure(Connection c) throws SQLException {
    boolean auto = c.getAutoCommit();
    c.setAutoCommit(false);
    try (Statement s = c.createStatement()) {
      s.execute("SELECT pg_advisory_xact_lock(" + LOCK_KEY + ")");
      s.execute(sql());
      c.commit();
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(auto);
    }
  }
}
