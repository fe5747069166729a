package io.tabula.actors.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.ActorTestConfig;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.storage.FileStorage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master on the journal plugins (MasterJournals), with real files and two actor systems on
 * one storage root, as two nodes share it: a second master's recovery fences the first, whose
 * next write fails so it stops and whose change never enters the history; a node that does not
 * hold the master lease cannot open the journal; and a journal kept the old way
 * (pekko-persistence-jdbc on H2) is imported with nothing lost.
 */
class MasterJournalsTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  @TempDir
  Path dir;

  private final AtomicLong clock = new AtomicLong(1_700_000_000_000_000L);

  private ActorRef<Master.Command> master(ActorTestKit kit) {
    return kit.spawn(Master.create(Master.PERSISTENCE_ID, clock::incrementAndGet));
  }

  private static StatusReply<TableInfo> create(ActorTestKit kit, ActorRef<Master.Command> master, String table) {
    TestProbe<StatusReply<TableInfo>> probe = kit.createTestProbe();
    master.tell(new Master.CreateTable(table, Map.of("f", GcPolicy.KEEP_ALL), List.of(), probe.getRef()));
    return probe.receiveMessage(WAIT);
  }

  private static Directory directory(ActorTestKit kit, ActorRef<Master.Command> master) {
    TestProbe<Directory> probe = kit.createTestProbe();
    master.tell(new Master.GetDirectory(probe.getRef()));
    return probe.receiveMessage(WAIT);
  }

  @Test
  void aSecondMasterFencesTheFirstWhoseNextChangeFailsAndIsNeverRead() {
    ActorTestKit first = ActorTestConfig.startWithJournalIn(dir);
    ActorTestKit second = ActorTestConfig.startWithJournalIn(dir);
    try {
      ActorRef<Master.Command> old = master(first);
      assertTrue(create(first, old, "a").isSuccess());
      ActorRef<Master.Command> taker = master(second);
      assertTrue(directory(second, taker).tables().containsKey("a"), "the taker read what the first wrote");
      assertTrue(create(second, taker, "b").isSuccess());

      // The first master does not know yet: its next change reaches the disk, is refused, and it stops.
      TestProbe<StatusReply<TableInfo>> probe = first.createTestProbe();
      old.tell(new Master.CreateTable("c", Map.of("f", GcPolicy.KEEP_ALL), List.of(), probe.getRef()));
      probe.expectNoMessage(Duration.ofSeconds(1));
      first.createTestProbe().expectTerminated(old, WAIT);

      assertTrue(create(second, taker, "d").isSuccess(), "the taker goes on");
    } finally {
      first.shutdownTestKit();
      second.shutdownTestKit();
    }
    ActorTestKit third = ActorTestConfig.startWithJournalIn(dir);
    try {
      Directory d = directory(third, master(third));
      assertEquals(List.of("a", "b", "d"), d.tables().keySet().stream().sorted().toList(),
          "the fenced master's table c is not in the history");
    } finally {
      third.shutdownTestKit();
    }
  }

  /**
   * A master that runs long renews its journal's epoch once it has appended enough: it goes on
   * writing through every renewal, and a later master reads every change. (What a renewal
   * deletes: {@code MasterJournalTest#aSuccessorEpochKeepsTheHistoryAndDeletesTheDeadSegments}.)
   */
  @Test
  void aMasterRenewsItsEpochAsItWritesAndLosesNothing() throws Exception {
    com.typesafe.config.Config config = com.typesafe.config.ConfigFactory.parseString(
        "tabula.master-journal { renew-after = 8KiB, segment-size = 4KiB }")
        .withFallback(ActorTestConfig.withJournalIn(dir));
    ActorTestKit kit = ActorTestKit.create(config);
    int tables = 500;
    long files;
    try {
      ActorRef<Master.Command> master = master(kit);
      for (int i = 0; i < tables; i++) {
        assertTrue(create(kit, master, String.format("t%03d", i)).isSuccess(), "table " + i);
      }
      assertEquals(tables, directory(kit, master).tables().size());
      files = journalFiles();
    } finally {
      kit.shutdownTestKit();
    }
    List<Path> epochs;
    try (java.util.stream.Stream<Path> list = Files.list(dir.resolve("master/journal"))) {
      epochs = list.filter(Files::isDirectory).toList();
    }
    ActorTestKit later = ActorTestKit.create(config);
    try {
      Directory d = directory(later, master(later));
      assertEquals(tables, d.tables().size(), "a later master reads every table");
    } finally {
      later.shutdownTestKit();
    }
    long epochNumber = epochs.stream().mapToLong(p -> Long.parseLong(p.getFileName().toString())).max().orElse(0);
    System.out.printf("MasterJournals: %d tables created: newest epoch %d, %d segment files left%n", tables,
        epochNumber, files);
    assertTrue(epochNumber > 2, "the epoch was renewed as the master wrote: newest epoch " + epochNumber);
  }

  private long journalFiles() throws java.io.IOException {
    try (java.util.stream.Stream<Path> all = Files.walk(dir.resolve("master/journal"))) {
      return all.filter(f -> f.toString().endsWith(".log")).count();
    }
  }

  /**
   * H4 (docs/fencing.md, "A frozen master"): a node can ask whether its master's journal is
   * still its own, as the file sweep does before it deletes: not before its master opened the
   * journal, yes once it did, and no more once another node's master opened it (a newer epoch
   * fenced this one), though this node's master has not written since.
   */
  @Test
  void aNodeKnowsWhenItsMastersJournalWasFencedByANewerMaster() {
    ActorTestKit first = ActorTestConfig.startWithJournalIn(dir);
    ActorTestKit second = ActorTestConfig.startWithJournalIn(dir);
    try {
      MasterJournals journals = MasterJournals.get(Adapter.toClassic(first.system()));
      assertFalse(journals.holdsJournal(), "no master opened it here yet");
      ActorRef<Master.Command> old = master(first);
      assertTrue(create(first, old, "a").isSuccess());
      assertTrue(journals.holdsJournal());
      assertTrue(create(second, master(second), "b").isSuccess());
      assertFalse(journals.holdsJournal(), "the second node's master fenced it");
    } finally {
      first.shutdownTestKit();
      second.shutdownTestKit();
    }
  }

  @Test
  void aNodeThatDoesNotHoldTheMasterLeaseCannotOpenTheJournal() throws Exception {
    ActorTestKit kit = ActorTestConfig.startWithJournalIn(dir);
    try {
      MasterJournals.get(Adapter.toClassic(kit.system())).use(new FileStorage(dir), () -> false);
      ActorRef<Master.Command> master = master(kit);
      kit.createTestProbe().expectTerminated(master, WAIT);
      assertTrue(!Files.exists(dir.resolve("master/journal/0000000001")), "no epoch was claimed");
    } finally {
      kit.shutdownTestKit();
    }
  }

  @Test
  void aJournalKeptInH2IsImportedWithItsSnapshotAndEvents() throws Exception {
    Path master = dir.resolve("master");
    ActorTestKit old = ActorTestConfig.startWithJdbcJournalIn(master);
    Directory before;
    try {
      ActorRef<Master.Command> m = master(old);
      assertTrue(create(old, m, "t").isSuccess());
      String tablet = directory(old, m).tabletsOf("t").get(0).id();
      for (int i = 1; i <= 250; i++) { // past the first snapshot (every 200 events)
        m.tell(new Master.RecordFiles("t", tablet, Map.of("f", List.of(i + ".sst")), i));
      }
      assertTrue(create(old, m, "u").isSuccess());
      before = directory(old, m);
    } finally {
      old.shutdownTestKit();
    }
    assertTrue(Files.exists(H2JournalImport.h2File(dir)));

    FileStorage storage = new FileStorage(dir);
    int imported = H2JournalImport.importIfPresent(dir, storage, "master/journal", WAIT);
    assertTrue(imported > 200, "the events and the snapshot were imported: " + imported);
    assertTrue(!Files.exists(H2JournalImport.h2File(dir)));
    assertTrue(Files.exists(dir.resolve("master/journal.mv.db.imported")), "the H2 file is kept, renamed");
    assertEquals(0, H2JournalImport.importIfPresent(dir, storage, "master/journal", WAIT), "only once");

    ActorTestKit now = ActorTestConfig.startWithJournalIn(dir);
    try {
      ActorRef<Master.Command> m = master(now);
      assertEquals(before, directory(now, m), "the directory is what it was");
      assertTrue(create(now, m, "v").isSuccess());
    } finally {
      now.shutdownTestKit();
    }
  }
}
