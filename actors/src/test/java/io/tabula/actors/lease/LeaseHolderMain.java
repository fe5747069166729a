package io.tabula.actors.lease;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.apache.pekko.coordination.lease.javadsl.Lease;

/**
 * A separate process that takes a lease and keeps it until it is killed or its standard input
 * closes. Prints {@code ACQUIRED} or {@code NOT-ACQUIRED} as its first line, and {@code LOST}
 * and the reason when it finds the lease lost.
 *
 * <p>Arguments: {@code file <lease dir> <lease name> <owner>}, or {@code postgres <jdbc url>
 * <lease name> <owner>}. A PostgreSQL holder also writes to the master's journal table as a
 * node does (its connection names the lease and owner for the fence): each input line
 * {@code write N} inserts event N and prints {@code WRITTEN N} or {@code REFUSED <SQL state>}.
 */
public final class LeaseHolderMain {
  private LeaseHolderMain() {}

  public static void main(String[] args) throws Exception {
    boolean postgres = args[0].equals("postgres");
    Lease lease = postgres
        ? new PostgresLease(PostgresLeaseTest.settings(args[1], args[2], args[3]))
        : new FileLease(FileLeaseTest.settings(Path.of(args[1]), args[2], args[3]));
    boolean acquired = lease.acquire(reason -> {
      System.out.println("LOST " + reason.map(Throwable::getMessage).orElse(""));
      System.out.flush();
    }).toCompletableFuture().get();
    System.out.println(acquired ? "ACQUIRED" : "NOT-ACQUIRED");
    System.out.flush();
    Connection journal = postgres ? PostgresLeaseTest.journalConnection(args[1], args[2], args[3]) : null;
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (journal != null && line.startsWith("write ")) {
        long n = Long.parseLong(line.substring(6).trim());
        try (PreparedStatement s = journal.prepareStatement(PostgresLeaseTest.INSERT_EVENT)) {
          s.setLong(1, n);
          s.setString(2, args[3]);
          s.executeUpdate();
          System.out.println("WRITTEN " + n);
        } catch (SQLException e) {
          System.out.println("REFUSED " + e.getSQLState());
        }
        System.out.flush();
      }
    }
  }
}
