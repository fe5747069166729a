package io.tabula.actors.journal;

import io.tabula.persistence.journal.JournalRecord;
import io.tabula.persistence.journal.MasterJournal;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a master's journal kept the way nodes kept it before (pekko-persistence-jdbc on the H2
 * file {@code master/journal.mv.db} under the data directory) into the journal on the storage
 * root ({@link MasterJournal}), once: its events (those not deleted) and each persistence id's
 * newest snapshot are copied byte for byte, with their serializer ids and manifests, as the first
 * epoch. The H2 file is then renamed {@code journal.mv.db.imported} and kept for the operator.
 *
 * <p>Runs at a node's start, before its master can. Upgrade by stopping every node, then
 * starting them: H2's file lock ({@code FILE_LOCK=FS}) lets one node import while the others wait
 * for it, and a node that finds the journal on the root started already leaves the H2 file alone
 * (and says so).
 */
public final class H2JournalImport {
  private static final Logger LOG = LoggerFactory.getLogger(H2JournalImport.class);
  /** Records per append while copying. */
  private static final int BATCH = 500;

  private H2JournalImport() {}

  /** The H2 file a node of an earlier version kept its master's journal in. */
  public static Path h2File(Path dataDir) {
    return dataDir.resolve("master").resolve("journal.mv.db");
  }

  /**
   * Imports the H2 journal under {@code dataDir}, if there is one, into the journal in {@code
   * dir} on {@code storage}; waits up to {@code wait} for another node importing it. Returns the
   * number of records imported (0 if there was nothing to import).
   */
  public static int importIfPresent(Path dataDir, Storage storage, String dir, Duration wait)
      throws IOException, InterruptedException {
    Path h2 = h2File(dataDir);
    if (!Files.exists(h2)) {
      return 0;
    }
    String url = "jdbc:h2:file:" + dataDir.resolve("master").resolve("journal").toAbsolutePath()
        + ";FILE_LOCK=FS;IFEXISTS=TRUE";
    long deadline = System.nanoTime() + wait.toNanos();
    while (true) {
      try (Connection c = DriverManager.getConnection(url, "tabula", "")) {
        if (!Files.exists(h2)) {
          return 0; // imported by another node while this one waited
        }
        if (!MasterJournal.isNew(storage, dir)) {
          // The journal is put in place whole (below), so one that exists holds a complete
          // import, or a journal begun without one: either way this file is done with.
          LOG.warn("the master's journal on the storage root ({}) exists already, so the old H2 journal {} is not "
              + "imported again; it is kept as journal.mv.db.imported", dir, h2);
          c.close();
          Files.move(h2, h2.resolveSibling("journal.mv.db.imported"), StandardCopyOption.ATOMIC_MOVE);
          return 0;
        }
        // Imported into a folder of its own, then renamed into place: a crash midway leaves no
        // partial journal that a master would take for the whole history.
        String staging = dir + "-import-" + java.util.UUID.randomUUID();
        int n = copy(c, storage, staging);
        storage.rename(staging, dir);
        storage.syncDirectory(Storage.parent(dir));
        c.close();
        Files.move(h2, h2.resolveSibling("journal.mv.db.imported"), StandardCopyOption.ATOMIC_MOVE);
        LOG.info("imported {} records of the master's H2 journal {} into {}; the H2 file is kept as "
            + "journal.mv.db.imported", n, h2, dir);
        return n;
      } catch (SQLException e) {
        if (!Files.exists(h2)) {
          return 0; // imported (and renamed) by another node while this one waited
        }
        if (System.nanoTime() > deadline) {
          throw new IOException("could not read the master's H2 journal " + h2 + " to import it (is a node of an "
              + "earlier version still running on this data directory?)", e);
        }
        Thread.sleep(500); // locked by another node importing it, or by a node not yet stopped
      }
    }
  }

  private static int copy(Connection c, Storage storage, String dir) throws SQLException, IOException {
    int count = 0;
    try (MasterJournal journal = MasterJournal.open(storage, dir, 8 << 20); Statement st = c.createStatement()) {
      List<JournalRecord> batch = new ArrayList<>();
      try (ResultSet rs = st.executeQuery("SELECT \"persistence_id\", \"sequence_number\", \"writer\", "
          + "\"write_timestamp\", \"adapter_manifest\", \"event_ser_id\", \"event_ser_manifest\", \"event_payload\" "
          + "FROM \"event_journal\" WHERE NOT \"deleted\" ORDER BY \"persistence_id\", \"sequence_number\"")) {
        while (rs.next()) {
          batch.add(new JournalRecord.Event(rs.getString(1), rs.getLong(2), rs.getString(3), rs.getLong(4),
              nonNull(rs.getString(5)), rs.getInt(6), nonNull(rs.getString(7)), rs.getBytes(8)));
          count += flushIfFull(journal, batch);
        }
      }
      try (ResultSet rs = st.executeQuery("SELECT s.\"persistence_id\", s.\"sequence_number\", s.\"created\", "
          + "s.\"snapshot_ser_id\", s.\"snapshot_ser_manifest\", s.\"snapshot_payload\" FROM \"snapshot\" s WHERE "
          + "s.\"sequence_number\" = (SELECT MAX(x.\"sequence_number\") FROM \"snapshot\" x "
          + "WHERE x.\"persistence_id\" = s.\"persistence_id\")")) {
        while (rs.next()) {
          batch.add(new JournalRecord.Snapshot(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getInt(4),
              nonNull(rs.getString(5)), rs.getBytes(6)));
        }
      }
      journal.append(batch);
      count += batch.size();
    }
    return count;
  }

  private static int flushIfFull(MasterJournal journal, List<JournalRecord> batch) throws IOException {
    if (batch.size() < BATCH) {
      return 0;
    }
    journal.append(batch);
    int n = batch.size();
    batch.clear();
    return n;
  }

  private static String nonNull(String s) {
    return s == null ? "" : s;
  }
}
