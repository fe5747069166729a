package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import io.tabula.actors.journal.MasterJournals;
import io.tabula.persistence.journal.JournalFencedException;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The master's node freezes ({@code SIGSTOP}) while clients write through every node, and
 * resumes ({@code SIGCONT}) long after: a frozen process still holds whatever it held, so the
 * master lease must expire on its own (it is renewed, not locked) and the master's journal must
 * not be hosted by the frozen process (it is files on the shared root). A new master takes over
 * (it accepts a move and creates a table while the old one is frozen), the frozen node's
 * tablets serve elsewhere, and after the resume the old master does nothing as master: it finds
 * its lease lost (or its commit log fenced, or itself downed: whichever it sees first), never
 * opens the journal again, any write it tries is refused by the journal's fence, the new master is not disturbed (it is not
 * fenced, so it does not restart), and the old node stops (downed). Every acknowledged write
 * reads back; the tablets cover the table once. The argument is in docs/fencing.md.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class MasterFreezeTest {
  /** What a node logs each time it opens the master's journal (MasterJournals). */
  private static final String OPENED = "master journal opened";
  private static final Duration FROZEN_PAST_TAKEOVER = Duration.ofSeconds(15);

  @Test
  void aFrozenMastersLeaseExpiresANewMasterTakesOverAndTheResumedOneDoesNothingAsMaster() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      NodeJvm n1 = cluster.node("n1");
      NodeJvm n2 = cluster.node("n2");
      NodeJvm n3 = cluster.node("n3");
      ClusterFixture.assertRunsMaster(n1);
      assertEquals(1, count(n1, OPENED), "n1 opened the journal once, as master");
      Workload load = Workload.create(cluster, n2, 6, 300);
      Workload.awaitPlacement(n2, Set.of("n1", "n2", "n3"), Duration.ofSeconds(60),
          t -> t.values().stream().anyMatch(o -> o[0].equals("n1")));
      load.startThroughFailures(List.of(n1, n2, n3));
      long mastered;
      long served;
      long stopped;
      long n1LogAtResume;
      try {
        Thread.sleep(2_000);
        long frozenAt = System.nanoTime();
        n1.signal("STOP");
        try {
          mastered = MasterDeathTest.awaitMaster(n2, n3, frozenAt, Duration.ofSeconds(90));
          Workload.awaitPlacement(n2, Set.of("n2", "n3"), Duration.ofSeconds(60), t -> true);
          served = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozenAt);
          try (BigtableTableAdminClient admin = ClusterFixture.admin(n3)) {
            admin.createTable(CreateTableRequest.of("made-while-frozen").addFamily("f"));
          }
          Thread.sleep(FROZEN_PAST_TAKEOVER.toMillis());
        } finally {
          n1LogAtResume = Files.size(n1.log);
          n1.signal("CONT");
        }
        long resumedAt = System.nanoTime();
        int openedBefore = count(n2, OPENED) + count(n3, OPENED);
        assertEquals(1, openedBefore, "one new master opened the journal, on n2 or n3");
        assertTrue(n1.awaitExit(Duration.ofSeconds(60)), "n1 still runs 60 s after it resumed; its log:\n"
            + n1.tail(80));
        stopped = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumedAt);
        String afterResume = Files.readString(n1.log).substring((int) n1LogAtResume);
        // Whichever it sees first stops it as master: its lease found lost, its commit log found
        // fenced (the node shuts down), or itself downed. Messages queued while it was frozen may
        // reach its master actor first; a write it tries then must be refused by the journal's fence.
        assertTrue(afterResume.contains("lease [") && afterResume.contains("] lost by")
                || afterResume.contains("LogLossStop")
                || afterResume.contains("Self downed"),
            "the resumed n1 found its master lease lost, its log fenced or itself downed; its log after the resume:\n"
                + afterResume);
        for (String entry : afterResume.split("\n(?=\\d\\d:\\d\\d:\\d\\d\\.\\d{3} )")) {
          if (entry.contains("Failed to persist")) {
            assertTrue(entry.contains(JournalFencedException.class.getName())
                    || entry.contains(MasterJournals.NotMasterException.class.getName()),
                "a journal write the resumed n1 tried was refused by the journal's fence or the lease check, "
                    + "not for another reason:\n" + entry);
          }
        }
        assertFalse(afterResume.contains(OPENED), "the resumed n1 never opened the journal again:\n" + afterResume);
        Thread.sleep(3_000);
        assertEquals(openedBefore, count(n2, OPENED) + count(n3, OPENED),
            "the new master was never fenced by the old one, so it never had to open the journal again");
        MasterDeathTest.awaitMaster(n2, n3, System.nanoTime(), Duration.ofSeconds(30));
      } finally {
        load.stop();
      }
      Map<String, String[]> tables = ClusterFixture.tablets(n2, "made-while-frozen");
      assertEquals(1, tables.size(), "the table the new master made while n1 was frozen is there");
      MasterDeathTest.assertCoverOnce(ClusterFixture.ranges(n2, "t"));
      load.verify(n3);
      System.out.printf("n1 (the master's node) frozen: a new master accepted a move %d ms later; every tablet "
          + "served on n2 or n3 %d ms later; n1 resumed %d s after the takeover and had stopped %d ms after "
          + "resuming, without acting as master%n", mastered, served, FROZEN_PAST_TAKEOVER.toSeconds(), stopped);
    }
  }

  private static int count(NodeJvm n, String what) throws IOException {
    return count(Files.readString(n.log), what);
  }

  private static int count(String log, String what) {
    int count = 0;
    for (int i = log.indexOf(what); i >= 0; i = log.indexOf(what, i + 1)) {
      count++;
    }
    return count;
  }
}
