package io.tabula.actors.master;

import static io.tabula.actors.ActorTestConfig.await;
import static io.tabula.actors.ActorTestConfig.startWithJournalIn;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.ActorTestConfig;
import io.tabula.persistence.schema.GcPolicy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
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
 * How the directory reaches a node's copy ({@link DirectoryFeed}, {@link DirectoryCache}):
 * the master on its real journal, every message serialized (so a change's directory after it,
 * which only a subscriber in the master's JVM gets, is dropped on the way and the copy is
 * built from the events alone), and the copy compared with the master's own directory.
 */
@ExtendWith(LogCapturingExtension.class)
class DirectoryFeedTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final PersistenceId ID = PersistenceId.ofUniqueId("feed-master");

  /**
   * Deleted here, not by JUnit: the journal's writer may still add a file as the actor system
   * stops, and JUnit's deletion failed the test on that folder once (a clean-clone CI run).
   */
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
  void stop() throws Exception {
    if (kit != null) {
      kit.shutdownTestKit();
    }
    ActorTestConfig.deleteTree(dir);
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

  private void create(String table, int splits) {
    List<byte[]> s = new ArrayList<>();
    for (int i = 1; i <= splits; i++) {
      s.add(String.format("row%07d", i).getBytes(StandardCharsets.UTF_8));
    }
    StatusReply<TableInfo> r = call(x -> new Master.CreateTable(table, Map.of("f", GcPolicy.KEEP_ALL), s, x));
    assertTrue(r.isSuccess(), () -> "created: " + r);
  }

  private void split(String table, String row) {
    Directory d = directory();
    TabletInfo t = d.locate(table, row.getBytes(StandardCharsets.UTF_8));
    long n = d.nextTabletNumber();
    StatusReply<org.apache.pekko.Done> r = call(x -> new Master.RecordSplit(table, t.id(), row.getBytes(StandardCharsets.UTF_8),
        t.id() + "-l" + n, t.id() + "-r" + n, x));
    assertTrue(r.isSuccess(), () -> "split: " + r);
  }

  private DirectoryCache subscribed() {
    DirectoryCache cache = new DirectoryCache();
    kit.spawn(DirectoryCache.subscriber(cache,
        kit.spawn(Topic.create(DirectoryFeed.Change.class, Master.TOPIC)), master));
    return cache;
  }

  private void awaitSame(DirectoryCache cache) {
    TestProbe<Object> poll = kit.createTestProbe();
    poll.awaitAssert(WAIT, () -> {
      assertEquals(directory(), cache.get(), "the node's copy is the master's directory");
      return null;
    });
  }

  @Test
  void aCopyFedByPublishedChangesIsTheMastersDirectory() {
    DirectoryCache cache = subscribed();
    awaitSame(cache);
    create("t", 5);
    split("t", "row0000003x");
    create("u", 0);
    StatusReply<org.apache.pekko.Done> deleted = call(x -> new Master.DeleteTable("u", x));
    assertTrue(deleted.isSuccess());
    StatusReply<TableInfo> changed = call(x -> new Master.ModifyFamilies("t", List.of(new Master.FamilyChange("g",
        Master.FamilyChange.Kind.CREATE, GcPolicy.maxVersions(2))), x));
    assertTrue(changed.isSuccess());
    awaitSame(cache);
    assertEquals(7, cache.get().tabletsOf("t").size(), "five splits make six tablets, and one split more");
  }

  /**
   * A copy is the master's own directory (the node runs the master: views of the whole
   * directory are answered there) once a change from the master's own JVM gave it, also when
   * the copy had reached that version from an answer first; a copy made from events is not.
   */
  @Test
  void aCopyIsTheMastersOwnOnlyWhenTheMastersJvmGaveIt() {
    DirectoryCache alone = new DirectoryCache();
    assertFalse(alone.isMasters(), "an empty copy");
    create("t", 2);
    Directory now = directory();
    Directory copy = new Directory(now.version(), now.nextTabletNumber(), now.tables(), now.tablets(), now.placement());
    alone.offer(copy);
    assertFalse(alone.isMasters(), "a copy of its own, at the master's version");
    alone.receive(new DirectoryFeed.Change(now.version(), now.version(), List.of(), now, null), master, kit.system());
    assertTrue(alone.isMasters(), "the master's own, given at the same version");
    assertSame(now, alone.get());
    create("u", 1);
    Directory next = directory();
    alone.receive(new DirectoryFeed.Change(now.version(), next.version(), null, next, null), master, kit.system());
    assertTrue(alone.isMasters());
  }

  @Test
  void aNodeBehindGetsTheEventsSinceItsVersionInline() {
    create("t", 3);
    create("u", 2);
    DirectoryFeed.Changes ch = call(x -> new Master.GetChanges(0, "", x));
    assertNotNull(ch.events(), "a small change travels inline");
    assertNull(ch.key());
    assertEquals(0, ch.from());
    assertEquals(directory().version(), ch.to());

    DirectoryCache cache = new DirectoryCache();
    await(cache.refresh(master, kit.system(), WAIT), WAIT);
    assertEquals(directory(), cache.get());

    DirectoryFeed.Changes none = call(x -> new Master.GetChanges(cache.get().version(), "", x));
    assertEquals(List.of(), none.events(), "a copy up to date gets nothing");
  }

  @Test
  void aLargeChangeTravelsInChunksAndAMissedOneIsFetched() {
    DirectoryCache cache = subscribed();
    awaitSame(cache);
    long before = cache.get().version();
    create("big", 20_000);
    DirectoryFeed.Changes ch = call(x -> new Master.GetChanges(before, "", x));
    assertNull(ch.events(), "20,000 tablets do not travel inline");
    assertTrue(ch.chunks() > 1, () -> "in several chunks: " + ch);
    assertEquals(before, ch.from());
    awaitSame(cache);
    assertEquals(20_001, cache.get().tabletsOf("big").size());

    // A change that does not follow the copy (one before it was missed) makes the node ask.
    DirectoryCache late = new DirectoryCache();
    late.offer(cache.get());
    split("big", "row0000010x");
    split("big", "row0000020x");
    Directory now = directory();
    late.receive(new DirectoryFeed.Change(now.version() - 1, now.version(), List.of(), null, null), master, kit.system());
    TestProbe<Object> poll = kit.createTestProbe();
    poll.awaitAssert(WAIT, () -> {
      assertEquals(now, late.get(), "the missed change was fetched");
      return null;
    });

    DirectoryFeed.Chunk gone = call(x -> new Master.GetChunk("d12345", 0, x));
    assertNull(gone.bytes(), "a blob the master does not have is answered as gone");
  }

  private static Master.TableCreated tableCreated(String name, long number) {
    return new Master.TableCreated(new TableInfo(name, Map.of("f", GcPolicy.KEEP_ALL), 1L),
        List.of(TabletInfo.empty(name, name + "-" + number, new byte[0], new byte[0])), number + 1);
  }

  /**
   * A node can hold a version inside a published change: it fetched the whole directory while
   * events waited to be published. It catches up from that version with the events after it,
   * not with the whole directory again (which it did at every change, before the events were
   * kept one by one).
   */
  @Test
  void aCopyInsideAPublishedChangeCatchesUpWithTheEventsAfterIt() {
    DirectoryFeed feed = new DirectoryFeed(org.apache.pekko.serialization.SerializationExtension.get(
        org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(kit.system())));
    feed.recovered();
    List<Master.Event> events = List.of(tableCreated("a", 1), tableCreated("b", 2), tableCreated("c", 3));
    List<Directory> versions = new ArrayList<>(List.of(Directory.EMPTY));
    for (Master.Event e : events) {
      Directory before = versions.get(versions.size() - 1);
      Directory after = DirectoryEvents.apply(before, e);
      feed.applied(before, e, after);
      versions.add(after);
    }
    Directory last = versions.get(3);
    DirectoryFeed.Change published = feed.next(last, 0, false);
    assertEquals(0, published.from());
    assertEquals(last.version(), published.to());
    assertEquals(events, published.events(), "one change of three events");

    DirectoryFeed.Changes ch = feed.since(last, versions.get(1).version(), "", 0);
    assertEquals(events.subList(1, 3), ch.events(), "the events after the copy's version, inline");
    DirectoryCache cache = new DirectoryCache();
    cache.offer(versions.get(1));
    assertTrue(cache.apply(ch.from(), ch.events(), ch.to(), ch.digest()));
    assertEquals(last, cache.get());

    assertTrue(feed.since(last, last.version() + 5, "", 0).key().startsWith("d"),
        "a version the master never made: the whole directory");
  }

  @Test
  void splitsTooManyForOneMessageAreSentInPiecesFirst() {
    List<byte[]> splits = new ArrayList<>();
    for (int i = 1; i <= 60_000; i++) {
      splits.add(String.format("row%07d", i).getBytes(StandardCharsets.UTF_8));
    }
    assertTrue(StagedSplits.pieces(splits).size() > 2, "60,000 splits make several pieces");
    TableInfo t = await(StagedSplits.createTable(master, kit.system(), WAIT, "wide", Map.of("f", GcPolicy.KEEP_ALL),
        splits), WAIT);
    assertEquals("wide", t.name());
    assertEquals(60_001, directory().tabletsOf("wide").size());

    StatusReply<TableInfo> lost = call(x -> new Master.CreateStagedTable("lost", Map.of("f", GcPolicy.KEEP_ALL), Map.of(),
        "no-such-upload", 10, x));
    assertTrue(lost.isError());
    assertEquals(io.tabula.protocol.errors.ErrorCode.UNAVAILABLE,
        ((io.tabula.protocol.errors.Refused) lost.getError()).code(), "splits the master lost are UNAVAILABLE");
    assertNull(directory().table("lost"));
  }

  @Test
  void aNewMasterSendsTheWholeDirectoryToANodeBehindIt() {
    create("t", 3);
    DirectoryCache cache = new DirectoryCache();
    await(cache.refresh(master, kit.system(), WAIT), WAIT);
    long held = cache.get().version();
    create("u", 4);
    Directory before = directory();

    TestProbe<Object> watcher = kit.createTestProbe();
    master.tell(Master.Stop.INSTANCE);
    watcher.expectTerminated(master, WAIT);
    kit.shutdownTestKit();
    kit = startWithJournalIn(dir);
    master = kit.spawn(Master.create(ID, clock::get));

    DirectoryFeed.Changes ch = call(x -> new Master.GetChanges(held, "", x));
    assertNull(ch.events(), "a new master keeps no changes from before it");
    assertTrue(ch.key().startsWith("d"), () -> "the whole directory: " + ch);
    DirectoryCache again = new DirectoryCache();
    again.offer(cache.get());
    await(again.refresh(master, kit.system(), WAIT), WAIT);
    assertEquals(before, again.get());
  }

  /**
   * The master's versions went back (its journal lost changes it had published): a copy newer
   * than every change and heartbeat it receives is found and replaced by the master's directory,
   * older as it is, and the tablet listeners are told to start over.
   */
  @Test
  void aCopyNewerThanTheMastersIsFoundAndReplaced() {
    create("t", 3);
    Directory masters = directory();
    String id = masters.tabletsOf("t").get(0).id();
    Directory ahead = DirectoryEvents.apply(DirectoryEvents.apply(masters, new Master.TabletsAssigned(Map.of(id,
        "n8"))), new Master.TabletsAssigned(Map.of(id, "n9")));
    assertTrue(ahead.version() > masters.version());
    DirectoryCache cache = new DirectoryCache();
    cache.offer(ahead);
    List<DirectoryCache.TabletChanges> told = new java.util.concurrent.CopyOnWriteArrayList<>();
    cache.addTabletListener(told::add);
    long started = System.nanoTime();
    kit.spawn(DirectoryCache.subscriber(cache, kit.spawn(Topic.create(DirectoryFeed.Change.class, Master.TOPIC)),
        master));
    awaitSame(cache);
    System.out.printf("a copy newer than the master's: replaced %d ms after it subscribed%n",
        (System.nanoTime() - started) / 1_000_000);
    assertTrue(System.nanoTime() - started >= DirectoryCache.BEHIND_FOR.toNanos(),
        "not before every change for a while was older than the copy");
    assertTrue(told.stream().anyMatch(c -> c.wentBack() && c.version() == masters.version()), () -> "told: " + told);
  }

  /**
   * The digest kept as the directory changes is the digest of its content: a copy read from
   * bytes (which computes it from every entry) has the same, through creates, splits,
   * placements, opens, family changes and deletes; and each change changes it.
   */
  @Test
  void theDigestKeptAsTheDirectoryChangesIsTheDigestOfItsContent() {
    List<Long> seen = new ArrayList<>();
    java.util.function.Consumer<Directory> check = d -> {
      Directory read = ActorTestConfig.roundTrip(kit, d);
      assertEquals(d.digest(), read.digest(), () -> "the digest kept is the content's at " + d);
      assertFalse(seen.contains(d.digest()), () -> "each change changes the digest: " + d);
      seen.add(d.digest());
    };
    check.accept(directory());
    create("t", 5);
    check.accept(directory());
    split("t", "row0000003x");
    check.accept(directory());
    create("u", 2);
    check.accept(directory());
    StatusReply<TableInfo> changed = call(x -> new Master.ModifyFamilies("t", List.of(new Master.FamilyChange("g",
        Master.FamilyChange.Kind.CREATE, GcPolicy.maxVersions(2))), x));
    assertTrue(changed.isSuccess());
    check.accept(directory());
    Directory d = directory();
    String first = d.tabletsOf("t").get(0).id();
    String second = d.tabletsOf("t").get(1).id();
    d = DirectoryEvents.apply(d, new Master.TabletsAssigned(Map.of(first, "n1", second, "n2")));
    check.accept(d);
    d = DirectoryEvents.apply(d, new Master.TabletOpened(first, "n1", "n1.a", List.of()));
    check.accept(d);
    StatusReply<org.apache.pekko.Done> deleted = call(x -> new Master.DeleteTable("u", x));
    assertTrue(deleted.isSuccess());
    check.accept(directory());
  }

  /**
   * A node's copy that differs from the master's at the same version (the same events made
   * two directories: a bug) is found by the digest the master's heartbeats and changes carry,
   * and replaced by the master's whole directory. Without the check such a copy kept its
   * difference until the next new master: versions alone match.
   */
  @Test
  void aCopyThatDiffersFromTheMastersIsFoundAndReplaced() {
    create("t", 3);
    Directory before = directory();
    create("u", 0);
    Directory now = directory();
    String id = before.tabletsOf("t").get(0).id();
    Directory wrong = DirectoryEvents.apply(before, new Master.TabletsAssigned(Map.of(id, "n9")));
    assertEquals(now.version(), wrong.version(), "a different directory at the master's version");

    // At the master's version: a heartbeat finds it.
    DirectoryCache atVersion = new DirectoryCache();
    atVersion.offer(wrong);
    kit.spawn(DirectoryCache.subscriber(atVersion, kit.spawn(Topic.create(DirectoryFeed.Change.class, Master.TOPIC)),
        master));
    awaitSame(atVersion);
    assertTrue(atVersion.divergences() >= 1, "the difference was counted");

    // Behind the master: the change it applies next does not make the master's digest.
    DirectoryCache behind = new DirectoryCache();
    behind.offer(wrong);
    create("w", 1);
    DirectoryFeed.Changes ch = call(x -> new Master.GetChanges(wrong.version(), "", x));
    assertNotNull(ch.events(), "the events since the copy's version, inline");
    assertFalse(behind.apply(ch.from(), ch.events(), ch.to(), ch.digest()),
        "events that do not make the master's digest are not taken");
    assertEquals(wrong, behind.get());
    assertEquals(1, behind.divergences());
    await(behind.refresh(master, kit.system(), WAIT), WAIT);
    assertEquals(directory(), behind.get(), "the whole directory replaced the copy");
  }
}
