package io.tabula.actors.master;

import static io.tabula.actors.ActorTestConfig.startWithJournalIn;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.ActorTestConfig;
import io.tabula.actors.master.Master.FamilyChange.Kind;
import io.tabula.actors.master.Master.FamilyChange;
import io.tabula.persistence.journal.JournalRecord;
import io.tabula.persistence.journal.MasterJournal;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master behavior against a real journal (the master's journal in files, MasterJournals), with
 * every message serialized. Replies go to test probes, so they are serialized too. The
 * restart tests stop the whole actor system and recover the master in a new one from the
 * same file.
 */
@ExtendWith(LogCapturingExtension.class)
class MasterTest {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static final PersistenceId ID = PersistenceId.ofUniqueId("test-master");
  private static final GcPolicy UNION = GcPolicy.union(GcPolicy.maxAgeMicros(3_600_000_000L),
      GcPolicy.maxVersions(3));
  private static final GcPolicy INTERSECTION = GcPolicy.intersection(GcPolicy.maxAgeMicros(86_400_000_000L),
      GcPolicy.maxVersions(1));

  /** Deleted here ({@link ActorTestConfig#deleteTree}), not by JUnit: the journal may add a file as it stops. */
  @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.NEVER)
  Path dir;

  private final AtomicLong clock = new AtomicLong(1_700_000_000_000_000L);
  private ActorTestKit kit;
  private ActorRef<Master.Command> master;

  @BeforeEach
  void start() {
    kit = startWithJournalIn(dir);
    master = kit.spawn(Master.create(ID, clock::get));
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (kit != null) {
      kit.shutdownTestKit();
    }
    ActorTestConfig.deleteTree(dir);
  }

  /** Stops the master and its actor system, then recovers the master in a new one on the same journal. */
  private void restart() {
    TestProbe<Object> watcher = kit.createTestProbe();
    master.tell(Master.Stop.INSTANCE);
    watcher.expectTerminated(master, WAIT);
    kit.shutdownTestKit();
    kit = startWithJournalIn(dir);
    master = kit.spawn(Master.create(ID, clock::get));
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @SuppressWarnings("unchecked")
  private <R> R call(Function<ActorRef<R>, Master.Command> command) {
    TestProbe<R> probe = (TestProbe<R>) (TestProbe<?>) kit.createTestProbe(Object.class);
    master.tell(command.apply(probe.getRef()));
    return ActorTestConfig.roundTrip(kit, probe.receiveMessage(WAIT));
  }

  private Directory directory() {
    return call(Master.GetDirectory::new);
  }

  private StatusReply<TableInfo> create(String name, Map<String, GcPolicy> families, String... splits) {
    List<byte[]> s = java.util.Arrays.stream(splits).map(MasterTest::b).toList();
    return call(r -> new Master.CreateTable(name, families, s, r));
  }

  private StatusReply<TableInfo> modify(String table, FamilyChange... changes) {
    return call(r -> new Master.ModifyFamilies(table, List.of(changes), r));
  }

  private StatusReply<Done> split(String table, String parent, String row, String left, String right) {
    return call(r -> new Master.RecordSplit(table, parent, b(row), left, right, r));
  }

  private StatusReply<TableInfo> options(String table, TableOptions.Change change) {
    return call(r -> new Master.ChangeOptions(table, change, r));
  }

  private StatusReply<Done> delete(String table) {
    return call(r -> new Master.DeleteTable(table, r));
  }

  private static ErrorCode codeOf(StatusReply<?> reply) {
    assertTrue(reply.isError(), "expected an error, got " + reply);
    return Refusal.in(reply.getError()).orElseThrow(() -> new AssertionError("not a refusal: " + reply.getError())).code();
  }

  /** Every row falls in exactly one tablet: ranges are contiguous, start empty and end unbounded. */
  private static void assertCoversEveryRowOnce(List<TabletInfo> tablets) {
    assertFalse(tablets.isEmpty());
    assertArrayEquals(new byte[0], tablets.get(0).startRow());
    assertArrayEquals(new byte[0], tablets.get(tablets.size() - 1).endRow());
    for (int i = 1; i < tablets.size(); i++) {
      assertArrayEquals(tablets.get(i - 1).endRow(), tablets.get(i).startRow(), "gap or overlap at " + i);
      assertTrue(tablets.get(i).endRow().length == 0
          || java.util.Arrays.compare(tablets.get(i).startRow(), tablets.get(i).endRow()) < 0);
    }
  }

  @Test
  void createTableMakesOneTabletPerSplitRangeCoveringEveryRowOnce() {
    Map<String, GcPolicy> families = Map.of("f", GcPolicy.maxVersions(2), "g", UNION, "h", INTERSECTION,
        "k", GcPolicy.KEEP_ALL);
    StatusReply<TableInfo> reply = create("t", families, "m", "c", "m", "", "t");

    assertTrue(reply.isSuccess(), String.valueOf(reply));
    TableInfo t = reply.getValue();
    assertEquals("t", t.name());
    assertEquals(families, t.families());
    assertEquals(clock.get(), t.createdMicros());

    Directory d = directory();
    assertEquals(1, d.version());
    assertEquals(t, d.table("t"));
    List<TabletInfo> tablets = d.tabletsOf("t");
    assertEquals(4, tablets.size(), "splits are sorted, deduplicated and the empty one dropped: " + tablets);
    assertCoversEveryRowOnce(tablets);
    assertArrayEquals(b("c"), tablets.get(0).endRow());
    assertArrayEquals(b("m"), tablets.get(1).endRow());
    assertArrayEquals(b("t"), tablets.get(2).endRow());
    Set<String> ids = new HashSet<>();
    tablets.forEach(x -> ids.add(x.id()));
    assertEquals(4, ids.size(), "tablet ids are unique");
    for (String row : List.of("", "a", "c", "cz", "m", "s", "t", "zzz")) {
      TabletInfo at = d.locate("t", b(row));
      assertNotNull(at, row);
      assertTrue(at.containsRow(b(row)), row + " in " + at);
      assertEquals(1, tablets.stream().filter(x -> x.containsRow(b(row))).count(), row);
    }

    StatusReply<TableInfo> other = create("u", Map.of("f", GcPolicy.KEEP_ALL));
    assertTrue(other.isSuccess());
    Directory d2 = directory();
    assertEquals(1, d2.tabletsOf("u").size());
    assertFalse(ids.contains(d2.tabletsOf("u").get(0).id()), "ids are unique across tables");
  }

  @Test
  void everyChangeIsPublishedOnTheDirectoryTopic() {
    DirectoryCache cache = new DirectoryCache();
    kit.spawn(DirectoryCache.subscriber(cache, kit.spawn(Topic.create(DirectoryFeed.Change.class, Master.TOPIC)),
        master));
    TestProbe<Object> poll = kit.createTestProbe();
    create("t", Map.of("f", GcPolicy.KEEP_ALL));
    poll.awaitAssert(WAIT, () -> {
      assertNotNull(cache.get().table("t"));
      return null;
    });
  }

  @Test
  void refusalsCarryTheirCodesAndChangeNothing() {
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL)).isSuccess());
    Directory before = directory();

    assertEquals(ErrorCode.ALREADY_EXISTS, codeOf(create("t", Map.of("g", GcPolicy.KEEP_ALL))));
    assertEquals(ErrorCode.NOT_FOUND, codeOf(delete("missing")));
    assertEquals(ErrorCode.NOT_FOUND, codeOf(modify("missing", new FamilyChange("f", Kind.DROP, null))));
    assertEquals(ErrorCode.NOT_FOUND, codeOf(modify("t", new FamilyChange("nope", Kind.UPDATE,
        GcPolicy.KEEP_ALL))));
    assertEquals(ErrorCode.NOT_FOUND, codeOf(modify("t", new FamilyChange("nope", Kind.DROP, null))));
    assertEquals(ErrorCode.ALREADY_EXISTS, codeOf(modify("t", new FamilyChange("f", Kind.CREATE,
        GcPolicy.KEEP_ALL))));
    // All or nothing: the valid first change is not applied when the second is refused.
    StatusReply<TableInfo> partly = modify("t", new FamilyChange("new", Kind.CREATE, GcPolicy.KEEP_ALL),
        new FamilyChange("nope", Kind.UPDATE, GcPolicy.KEEP_ALL));
    assertEquals(ErrorCode.NOT_FOUND, codeOf(partly));
    assertTrue(Refusal.in(partly.getError()).orElseThrow().message().startsWith("modifications[1].update"),
        partly.getError().getMessage());

    assertEquals(before, directory());
  }

  @Test
  void modifyFamiliesCreatesUpdatesAndDrops() {
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL, "g", GcPolicy.maxVersions(1))).isSuccess());

    StatusReply<TableInfo> reply = modify("t", new FamilyChange("h", Kind.CREATE, INTERSECTION),
        new FamilyChange("f", Kind.UPDATE, UNION), new FamilyChange("g", Kind.DROP, null));

    assertTrue(reply.isSuccess(), String.valueOf(reply));
    Map<String, GcPolicy> expected = Map.of("f", UNION, "h", INTERSECTION);
    assertEquals(expected, reply.getValue().families());
    Directory d = directory();
    assertEquals(2, d.version());
    assertEquals(expected, d.table("t").families());
    assertEquals(1, d.tabletsOf("t").size(), "tablets are untouched");
  }

  @Test
  void recordSplitReplacesTheParentByItsChildrenInRowOrder() {
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL), "m").isSuccess());
    List<TabletInfo> before = directory().tabletsOf("t");
    String first = before.get(0).id();
    String parent = before.get(1).id();
    master.tell(new Master.RecordFiles("t", parent, Map.of("default", List.of("1.sst")), 42));

    assertTrue(split("t", parent, "s", "t-left", "t-right").isSuccess());

    Directory d = directory();
    List<TabletInfo> tablets = d.tabletsOf("t");
    assertEquals(List.of(first, "t-left", "t-right"), tablets.stream().map(TabletInfo::id).toList());
    assertCoversEveryRowOnce(tablets);
    assertArrayEquals(b("m"), tablets.get(1).startRow());
    assertArrayEquals(b("s"), tablets.get(1).endRow());
    assertArrayEquals(b("s"), tablets.get(2).startRow());
    assertEquals(Map.of("default", List.of("1.sst")), tablets.get(2).files(), "children share the parent's files");
    assertEquals(42, tablets.get(1).redoPoint());
    assertNull(d.tablet(parent));

    assertTrue(split("t", parent, "s", "t-left", "t-right").isSuccess(), "re-recording an applied split acks");
    assertEquals(d, directory(), "and changes nothing");

    assertEquals(ErrorCode.NOT_FOUND, codeOf(split("t", "t-unknown", "x", "t-a", "t-b")));
    assertEquals(ErrorCode.NOT_FOUND, codeOf(split("missing", parent, "s", "t-left", "t-right")));
    assertEquals(d, directory());

    // a child named like a tablet the directory has (ids never meet: TabletIds) is refused, not recorded
    assertEquals(ErrorCode.INTERNAL, codeOf(split("t", "t-left", "p", first, "t-new")));
    assertEquals(ErrorCode.INTERNAL, codeOf(split("t", "t-left", "p", "t-new", "t-right")));
    assertEquals(d, directory());
  }

  @Test
  void recordFilesKeepsTheNewestReportAndIgnoresRepeats() {
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL)).isSuccess());
    String id = directory().tabletsOf("t").get(0).id();

    master.tell(new Master.RecordFiles("t", id, Map.of("default", List.of("1.sst", "2.sst")), 7));
    Directory d = directory();
    assertEquals(Map.of("default", List.of("1.sst", "2.sst")), d.tablet(id).files());
    assertEquals(7, d.tablet(id).redoPoint());
    assertEquals(2, d.version());

    master.tell(new Master.RecordFiles("t", id, Map.of("default", List.of("1.sst", "2.sst")), 7));
    master.tell(new Master.RecordFiles("t", "t-unknown", Map.of("default", List.of("9.sst")), 9));
    master.tell(new Master.RecordFiles("missing", id, Map.of(), 9));
    assertEquals(d, directory(), "a repeated or unknown report records nothing");
  }

  @Test
  void deleteTableRemovesItsTabletsAndNeverReusesTheirIds() {
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL), "m").isSuccess());
    Set<String> oldIds = new HashSet<>();
    directory().tabletsOf("t").forEach(x -> oldIds.add(x.id()));

    StatusReply<Done> reply = delete("t");

    assertTrue(reply.isSuccess(), String.valueOf(reply));
    Directory d = directory();
    assertNull(d.table("t"));
    assertTrue(d.tabletsOf("t").isEmpty());
    oldIds.forEach(id -> assertNull(d.tablet(id)));
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL)).isSuccess());
    assertFalse(oldIds.contains(directory().tabletsOf("t").get(0).id()));
  }

  @Test
  void aProtectedTableAndItsFamiliesCannotBeDeletedAndTheProtectionOutlivesARestart() {
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL, "g", GcPolicy.KEEP_ALL)).isSuccess());
    StatusReply<TableInfo> on = options("t", new TableOptions.Change(true, null));
    assertEquals(new TableOptions(true, 0), on.getValue().options());
    StatusReply<TableInfo> kept = options("t", new TableOptions.Change(null, 86_400_000_000L));
    assertEquals(new TableOptions(true, 86_400_000_000L), kept.getValue().options(), "a change keeps what it does not name");

    restart();

    assertEquals(new TableOptions(true, 86_400_000_000L), directory().table("t").options());
    assertEquals(ErrorCode.FAILED_PRECONDITION, codeOf(delete("t")));
    assertEquals(ErrorCode.FAILED_PRECONDITION, codeOf(modify("t", new FamilyChange("g", Kind.DROP, GcPolicy.KEEP_ALL))));
    assertTrue(modify("t", new FamilyChange("h", Kind.CREATE, GcPolicy.KEEP_ALL)).isSuccess(), "families may be added");
    assertNotNull(directory().table("t"));
    assertTrue(options("t", new TableOptions.Change(false, null)).isSuccess());
    assertTrue(delete("t").isSuccess());
    assertEquals(ErrorCode.NOT_FOUND, codeOf(options("t", new TableOptions.Change(true, null))));
  }

  @Test
  void stopStopsTheMaster() {
    TestProbe<Object> watcher = kit.createTestProbe();
    master.tell(Master.Stop.INSTANCE);
    watcher.expectTerminated(master, WAIT);
  }

  @Test
  void aMasterRestartRecoversItsStateFromTheJournal() {
    assertTrue(create("t", Map.of("f", GcPolicy.maxVersions(2), "g", UNION), "g", "p").isSuccess());
    assertTrue(create("u", Map.of("x", INTERSECTION)).isSuccess());
    assertTrue(create("gone", Map.of("x", GcPolicy.KEEP_ALL)).isSuccess());
    assertTrue(modify("t", new FamilyChange("h", Kind.CREATE, GcPolicy.maxAgeMicros(1_000_000)),
        new FamilyChange("f", Kind.UPDATE, GcPolicy.maxVersions(5))).isSuccess());
    String middle = directory().tabletsOf("t").get(1).id();
    master.tell(new Master.RecordFiles("t", middle, Map.of("default", List.of("3.sst")), 11));
    assertTrue(split("t", middle, "k", "t-l", "t-r").isSuccess());
    master.tell(new Master.RecordFiles("t", "t-r", Map.of("default", List.of("3.sst", "4.sst")), 12));
    assertTrue(delete("gone").isSuccess());
    Directory before = directory();
    assertEquals(8, before.version());

    restart();

    Directory after = directory();
    assertEquals(before, after);
    assertEquals(before.version(), after.version());
    assertEquals(before.nextTabletNumber(), after.nextTabletNumber());
    assertTrue(create("v", Map.of("f", GcPolicy.KEEP_ALL)).isSuccess(), "the recovered master takes commands");
    String fresh = directory().tabletsOf("v").get(0).id();
    assertNull(before.tablet(fresh), "a tablet id handed out before the restart is not handed out again");
    assertEquals(ErrorCode.ALREADY_EXISTS, codeOf(create("t", Map.of())));
  }

  @Test
  void aRestartAfterSnapshotsRecoversFromTheSnapshotAndTheEventsAfterIt() throws IOException {
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL), "m").isSuccess());
    List<TabletInfo> tablets = directory().tabletsOf("t");
    for (int i = 1; i <= 450; i++) {
      TabletInfo x = tablets.get(i % 2);
      master.tell(new Master.RecordFiles("t", x.id(), Map.of("default", List.of(i + ".sst")), i));
    }
    assertTrue(split("t", tablets.get(0).id(), "f", "t-a", "t-b").isSuccess());
    Directory before = directory();
    assertEquals(452, before.version());

    restart();

    assertEquals(before, directory());
    kit.shutdownTestKit();
    kit = null;
    try (MasterJournal j = MasterJournal.open(new FileStorage(dir), "master/journal", 1 << 20)) {
      assertTrue(j.latestSnapshot(ID.id(), 0, Long.MAX_VALUE, 0, Long.MAX_VALUE).isPresent(),
          "the master took snapshots");
    }
  }

  /**
   * Open and clean-close reports are recorded in the order they came, in groups: a tablet that
   * opened and closed cleanly on one node before the master recorded either ends with no log
   * named (a close taken before the open it follows was recorded used to be dropped, leaving
   * the tablet's log named as if it were open).
   */
  @Test
  void opensAndClosesAreRecordedInTheOrderTheyCame() {
    String[] splits = new String[99];
    for (int i = 0; i < splits.length; i++) {
      splits[i] = String.format("r%03d", i + 1);
    }
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL), splits).isSuccess());
    List<TabletInfo> tablets = directory().tabletsOf("t");
    TestProbe<StatusReply<Done>> opened = kit.createTestProbe();
    for (TabletInfo t : tablets) {
      assertTrue(mayOpen(t.id(), "n1", "n1.a").isSuccess());
    }
    long before = directory().version();
    long opening = 0;
    for (TabletInfo t : tablets) {
      opening++;
      master.tell(new Master.ReportOpened(t.id(), "n1", "n1.a", List.of(), opening, opened.getRef()));
      master.tell(new Master.ReportClosed(t.id(), "n1.a", true, opening));
    }
    for (int i = 0; i < tablets.size(); i++) {
      assertTrue(opened.receiveMessage(WAIT).isSuccess());
    }
    Directory d = directory();
    for (TabletInfo t : tablets) {
      assertEquals(List.of(), d.placementOf(t.id()).logs(), "tablet " + t.id() + " closed cleanly names no log");
    }
    assertEquals(before + 200, d.version(), "one event per open and per close");

    // A node closes a tablet cleanly, and its next actor opens it again on the same log before
    // the master recorded the close: the log ends named, as the tablet is open.
    String id = tablets.get(0).id();
    assertTrue(call((ActorRef<StatusReply<Done>> r) -> new Master.ReportOpened(id, "n1", "n1.a", List.of(), 1_000, r))
        .isSuccess());
    master.tell(new Master.ReportClosed(id, "n1.a", true, 1_000));
    assertTrue(call((ActorRef<StatusReply<Done>> r) -> new Master.ReportOpened(id, "n1", "n1.a", List.of(), 1_001, r))
        .isSuccess());
    assertEquals(List.of("n1.a"), directory().placementOf(id).logs(), "the tablet open again names its log");

    // The same close reaching the master only now, after the later opening's open (the order a
    // node's reports keep, broken): not recorded, or the open tablet's writes in n1.a would be
    // replayed by nobody.
    master.tell(new Master.ReportClosed(id, "n1.a", true, 1_000));
    String other = tablets.get(1).id();
    assertTrue(call((ActorRef<StatusReply<Done>> r) -> new Master.ReportOpened(other, "n1", "n1.a", List.of(), 1_002,
        r)).isSuccess(), "a later report is recorded (after the stale close, had it been kept)");
    assertEquals(List.of("n1.a"), directory().placementOf(id).logs(), "a stale close leaves the open tablet's log named");
    // The close of the latest opening is recorded.
    master.tell(new Master.ReportClosed(id, "n1.a", true, 1_001));
    assertTrue(call((ActorRef<StatusReply<Done>> r) -> new Master.ReportOpened(other, "n1", "n1.a", List.of(), 1_003,
        r)).isSuccess());
    assertEquals(List.of(), directory().placementOf(id).logs(), "the latest opening's close names no log");
  }

  /**
   * Has the master record {@code n} file changes of table t's first tablet (one event each, after
   * the table's creation), stops it, and opens its journal.
   */
  private MasterJournal journalAfterFileRecords(int n) throws IOException {
    TabletInfo x = directory().tabletsOf("t").get(0);
    for (int i = 1; i <= n; i++) {
      master.tell(new Master.RecordFiles("t", x.id(), Map.of("default", List.of(i + ".sst")), i));
    }
    assertEquals(n + 1, directory().version());
    kit.shutdownTestKit();
    kit = null;
    return MasterJournal.open(new FileStorage(dir), "master/journal", 1 << 20);
  }

  /**
   * The master's journal holds its two newest snapshots, not every snapshot since the last
   * deletion of events: it keeps its live records in memory.
   */
  @Test
  void theJournalKeepsTheTwoNewestSnapshots() throws IOException {
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL)).isSuccess());
    try (MasterJournal j = journalAfterFileRecords(650)) {
      assertEquals(java.util.Optional.of(600L), j.latestSnapshot(ID.id(), 0, Long.MAX_VALUE, 0, Long.MAX_VALUE)
          .map(JournalRecord.Snapshot::sequenceNr));
      assertEquals(java.util.Optional.of(400L), j.latestSnapshot(ID.id(), 0, 599, 0, Long.MAX_VALUE)
          .map(JournalRecord.Snapshot::sequenceNr));
      assertEquals(java.util.Optional.empty(), j.latestSnapshot(ID.id(), 0, 399, 0, Long.MAX_VALUE),
          "the snapshot at 200 is deleted once two newer were taken");
    }
  }

  /**
   * A snapshot writes the whole directory, so snapshots are spaced in proportion to its size
   * (one event per 50 tablets, 200 to 5,000 events apart): a table of 20,001 tablets is
   * snapshotted every 400 events, not every 200 as a small directory is.
   */
  @Test
  void aLargeDirectoryIsSnapshottedInProportionToItsSize() throws IOException {
    assertEquals(200, SnapshotSpacing.every(10));
    assertEquals(2_000, SnapshotSpacing.every(100_000));
    assertEquals(5_000, SnapshotSpacing.every(1_000_000));
    assertEquals(5_000, SnapshotSpacing.every(10_000_000));

    String[] splits = new String[20_000];
    for (int i = 0; i < splits.length; i++) {
      splits[i] = String.format("r%06d", i + 1);
    }
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL), splits).isSuccess());
    try (MasterJournal j = journalAfterFileRecords(450)) {
      assertEquals(java.util.Optional.empty(), j.latestSnapshot(ID.id(), 0, 399, 0, Long.MAX_VALUE).map(
          JournalRecord.Snapshot::sequenceNr), "a snapshot before 400 events, of a directory of 20,001 tablets");
      assertEquals(java.util.Optional.of(400L), j.latestSnapshot(ID.id(), 0, Long.MAX_VALUE, 0, Long.MAX_VALUE)
          .map(JournalRecord.Snapshot::sequenceNr));
    }
  }

  /**
   * docs/fencing.md, "Before a tablet opens": the master lets a tablet open only once the commit
   * logs its placement names, other than the opener's own, are fenced (their writers here are
   * no live members: this master runs without a cluster), answering with the logs to replay from
   * its own directory; and it refuses to record an open that did not replay one of them, so a
   * node whose copy of the directory lagged never serves a tablet without its acknowledged
   * writes.
   */
  @Test
  void aTabletOpensOnlyOnceItsEarlierWritersLogsAreFencedAndAnOpenThatSkippedOneIsRefused() {
    List<String> fenced = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    MasterNodes nodes = new MasterNodes() {
      @Override
      public List<ClusterNodes.NodeInfo> all() {
        return List.of();
      }

      @Override
      public java.util.concurrent.CompletionStage<Void> fenceLogs(java.util.Collection<String> folders) {
        fenced.addAll(folders);
        return java.util.concurrent.CompletableFuture.completedFuture(null);
      }
    };
    master = kit.spawn(Master.create(PersistenceId.ofUniqueId("opening-master"), clock::get, System::nanoTime,
        nodes, null, MasterSettings.DEFAULTS));
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL)).isSuccess());
    String id = directory().tabletsOf("t").get(0).id();

    StatusReply<Master.OpenPermit> first = mayOpen(id, "n1", "n1.a");
    assertTrue(first.isSuccess(), () -> "a new tablet opens at once: " + first.getError());
    assertEquals(List.of(), first.getValue().logs());
    assertTrue(call((ActorRef<StatusReply<Done>> r) -> new Master.ReportOpened(id, "n1", "n1.a", List.of(), 1, r))
        .isSuccess());

    assertEquals(ErrorCode.UNAVAILABLE, codeOf(mayOpen(id, "n2", "n2.a")),
        "n1's log is fenced first");
    assertEquals(List.of("n1.a"), fenced);
    StatusReply<Master.OpenPermit> second = mayOpen(id, "n2", "n2.a");
    assertTrue(second.isSuccess(), () -> "once fenced, it may open: " + second.getError());
    assertEquals(List.of("n1.a"), second.getValue().logs(), "and replays n1's log");

    assertEquals(ErrorCode.FAILED_PRECONDITION, codeOf(call((ActorRef<StatusReply<Done>> r) ->
        new Master.ReportOpened(id, "n2", "n2.a", List.of(), 1, r))), "an open that skipped n1's log is refused");
    assertEquals(List.of("n1.a"), directory().placementOf(id).logs(), "and changes nothing");
    assertTrue(call((ActorRef<StatusReply<Done>> r) -> new Master.ReportOpened(id, "n2", "n2.a", List.of("n1.a"), 2, r))
        .isSuccess());
    assertEquals(List.of("n2.a"), directory().placementOf(id).logs());
    assertEquals(ErrorCode.NOT_FOUND, codeOf(mayOpen("t-nope", "n2", "n2.a")));
  }

  /**
   * A split recorded while its tablet was handed over in a move (a split that finished on the
   * source before the hand-off reached it): the children go to the move's destination and no
   * log names them, so they open there without waiting for, and fencing, the live source,
   * which never opens them. (They used to inherit the parent's logs, the source's among them.)
   */
  @Test
  void theChildrenOfASplitStartWithNoLogNamed() {
    TableInfo table = new TableInfo("t", Map.of(), 1);
    Directory d = Directory.EMPTY.withTable(table, List.of(TabletInfo.empty("t", "t-1", new byte[0], new byte[0])), 2)
        .withPlacements(Map.of("t-1", new TabletPlacement("n2", TabletPlacement.State.MOVING, "n1",
            List.of("n1.a"))));
    Directory after = DirectoryEvents.apply(d, new Master.TabletSplit("t", "t-1", b("m"), "t-2", "t-3"));
    for (String child : List.of("t-2", "t-3")) {
      assertEquals(new TabletPlacement("n2", TabletPlacement.State.SERVING, "", List.of()), after.placementOf(child));
    }
  }

  /**
   * docs/fencing.md, "Before a tablet opens": a tablet opens only where the master placed it, an
   * opening reported by another node is refused, and a master that lost its lease (and has not
   * stopped yet) lets nothing open.
   */
  @Test
  void onlyTheOwnerMayOpenATabletAndAMasterWithoutItsLeaseLetsNothingOpen() {
    java.util.concurrent.atomic.AtomicBoolean lease = new java.util.concurrent.atomic.AtomicBoolean(true);
    MasterNodes nodes = new MasterNodes() {
      @Override
      public List<ClusterNodes.NodeInfo> all() {
        return List.of(new ClusterNodes.NodeInfo("n1", new org.apache.pekko.actor.Address("pekko", "tabula",
            "127.0.0.1", 7001), 1, "", "", "n1.a", org.apache.pekko.cluster.MemberStatus.up(), true));
      }

      @Override
      public boolean holdsLease() {
        return lease.get();
      }
    };
    master = kit.spawn(Master.create(PersistenceId.ofUniqueId("owner-master"), clock::get, System::nanoTime,
        nodes, null, MasterSettings.DEFAULTS));
    assertTrue(create("t", Map.of("f", GcPolicy.KEEP_ALL)).isSuccess());
    String id = directory().tabletsOf("t").get(0).id();
    assertEquals("n1", directory().ownerOf(id));
    assertEquals(ErrorCode.FAILED_PRECONDITION, codeOf(mayOpen(id, "n2", "n2.a")), "placed on n1, not on n2");
    assertEquals(ErrorCode.FAILED_PRECONDITION, codeOf(call((ActorRef<StatusReply<Done>> r) ->
        new Master.ReportOpened(id, "n2", "n2.a", List.of(), 1, r))), "an opening on n2 is refused");
    lease.set(false);
    assertEquals(ErrorCode.UNAVAILABLE, codeOf(mayOpen(id, "n1", "n1.a")), "without its lease, nothing opens");
    lease.set(true);
    assertTrue(mayOpen(id, "n1", "n1.a").isSuccess());
  }

  private StatusReply<Master.OpenPermit> mayOpen(String id, String node, String log) {
    return call((ActorRef<StatusReply<Master.OpenPermit>> r) -> new Master.MayOpen(id, node, log, r));
  }
}
