package io.tabula.cluster.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletLookup;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node's cache of tablet locations: the master is a stand-in actor that answers each lookup
 * with the real master's answer ({@link TabletLookup#answer}) from the directory the test
 * gives it, and counts them.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class TabletLocationsTest {
  private final ActorTestKit kit = ActorTestKit.create();
  private final AtomicReference<Directory> masters = new AtomicReference<>();
  private final AtomicInteger asked = new AtomicInteger();
  /** When set, lookups wait for it before they are answered. */
  private volatile CompletableFuture<Void> hold = CompletableFuture.completedFuture(null);

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static byte[] row(int i) {
    return String.format("r%06d", i).getBytes(StandardCharsets.UTF_8);
  }

  /** Tables of {@code n} tablets each split at r000001 .. r{n-1}, ids {@code table-i}, at {@code version}. */
  private static Directory directory(long version, Map<String, Integer> tables) {
    return directory(version, tables, 0, "");
  }

  /** The same, the tables made at {@code created}, ids {@code table-<idPrefix>i}. */
  private static Directory directory(long version, Map<String, Integer> tables, long created, String idPrefix) {
    Map<String, TableInfo> infos = new HashMap<>();
    Map<String, List<TabletInfo>> tablets = new HashMap<>();
    Map<String, TabletPlacement> placements = new HashMap<>();
    tables.forEach((name, n) -> {
      infos.put(name, new TableInfo(name, Map.of("f", GcPolicy.KEEP_ALL), created));
      List<TabletInfo> list = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        list.add(TabletInfo.empty(name, name + "-" + idPrefix + i, i == 0 ? new byte[0] : row(i),
            i == n - 1 ? new byte[0] : row(i + 1)));
        placements.put(name + "-" + idPrefix + i, new TabletPlacement("n1", TabletPlacement.State.SERVING, "",
            List.of()));
      }
      tablets.put(name, list);
    });
    return new Directory(version, 1_000_000, infos, tablets, placements);
  }

  private TabletLocations locations(int most) {
    return new TabletLocations(locationsMaster(), kit.system(), Duration.ofSeconds(5), most, null);
  }

  /** The stand-in master: answers lookups from {@link #masters}, once {@link #hold} is done. */
  private ActorRef<Master.Command> locationsMaster() {
    return kit.spawn(Behaviors.receiveMessage(c -> {
      if (c instanceof Master.Locate l) {
        asked.incrementAndGet();
        Directory d = masters.get();
        hold.thenRun(() -> l.replyTo().tell(TabletLookup.answer(d, l.table(), l.row(), l.before(), l.count())));
      }
      return Behaviors.same();
    }));
  }

  private static TabletInfo join(java.util.concurrent.CompletionStage<TabletInfo> s) {
    return s.toCompletableFuture().join();
  }

  @Test
  void aRowIsLookedUpOnceAndItsNeighboursComeWithIt() {
    masters.set(directory(3, Map.of("t", 1_000)));
    TabletLocations l = locations(10_000);
    assertNull(l.cached("t", row(100)));
    assertEquals("t-100", join(l.locate(TabletPosition.of("t", row(100)))).id());
    assertEquals(1, asked.get());
    for (int i = 100; i < 100 + TabletLocations.PREFETCH; i++) {
      assertEquals("t-" + i, join(l.locate(TabletPosition.of("t", row(i)))).id());
    }
    assertEquals(1, asked.get(), "the tablets after it came with the first lookup");
    assertEquals(TabletLocations.PREFETCH, l.held());
    assertNull(l.cached("t", row(99)), "nothing before it is guessed");
  }

  @Test
  void aTabletThatAnsweredMovedIsForgottenAndItsChildrenLookedUp() {
    masters.set(directory(3, Map.of("t", 10)));
    TabletLocations l = locations(10_000);
    TabletInfo parent = join(l.locate(TabletPosition.of("t", row(5))));
    // the master splits t-5 at r000005x: the cache does not know until the tablet says so
    Directory split = directory(4, Map.of("t", 10));
    List<TabletInfo> tablets = new ArrayList<>(split.tabletsOf("t"));
    byte[] mid = "r000005x".getBytes(StandardCharsets.UTF_8);
    tablets.set(5, TabletInfo.empty("t", "t-5a", row(5), mid));
    tablets.add(6, TabletInfo.empty("t", "t-5b", mid, row(6)));
    Map<String, TabletPlacement> placements = new HashMap<>(split.placement());
    placements.remove("t-5");
    placements.put("t-5a", placements.get("t-4"));
    placements.put("t-5b", placements.get("t-4"));
    masters.set(new Directory(4, 1_000_000, split.tables(), Map.of("t", tablets), placements));

    assertSame(parent, l.cached("t", mid), "still the parent: a cache is stale until used");
    l.forget(parent);
    assertEquals("t-5b", join(l.locate(TabletPosition.of("t", mid))).id());
    assertEquals("t-6", l.cached("t", row(6)).id(), "the tablets after it came with it");
    assertNull(l.cached("t", row(5)), "the parent is gone, the left child not yet looked up");
    assertEquals("t-5a", join(l.locate(TabletPosition.of("t", row(5)))).id());
    assertEquals("t-5b", l.cached("t", mid).id());
    assertEquals(3, asked.get());
  }

  @Test
  void anAnswerFromAnOlderDirectoryDoesNotBringBackWhatANewerOneReplaced() {
    Directory older = directory(3, Map.of("t", 4));
    Directory merged = new Directory(8, 1_000_000, older.tables(), Map.of("t", List.of(
        TabletInfo.empty("t", "t-01", new byte[0], row(2)), older.tabletsOf("t").get(2), older.tabletsOf("t").get(3))),
        Map.of("t-01", older.placementOf("t-0"), "t-2", older.placementOf("t-2"), "t-3", older.placementOf("t-3")));
    masters.set(merged);
    TabletLocations l = locations(10_000);
    assertEquals("t-01", join(l.locate(TabletPosition.of("t", row(1)))).id());
    masters.set(older); // an answer made before the merge, arriving after
    assertEquals(3, l.fresh("t", new byte[0], 10).toCompletableFuture().join().version());
    assertEquals("t-01", l.cached("t", row(0)).id());
    assertEquals("t-01", l.cached("t", row(1)).id());
  }

  @Test
  void requestsThatMissTogetherShareTheLookup() {
    masters.set(directory(3, Map.of("t", 1_000)));
    TabletLocations l = locations(10_000);
    hold = new CompletableFuture<>();
    List<CompletableFuture<TabletInfo>> waiting = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      waiting.add(l.locate(TabletPosition.of("t", row(200 + i))).toCompletableFuture());
    }
    hold.complete(null);
    for (int i = 0; i < 50; i++) {
      assertEquals("t-" + (200 + i), waiting.get(i).join().id());
    }
    assertEquals(1, asked.get(), "fifty misses of one range, one lookup");
  }

  @Test
  void requestsWaitingForALookupThatFailsFailWithItNotOneAfterAnother() {
    masters.set(directory(3, Map.of("t", 1_000)));
    ActorRef<Master.Command> silent = kit.spawn(Behaviors.receiveMessage(c -> Behaviors.same()));
    TabletLocations l = new TabletLocations(silent, kit.system(), Duration.ofMillis(500), 10_000, null);
    long start = System.nanoTime();
    List<CompletableFuture<TabletInfo>> waiting = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      waiting.add(l.locate(TabletPosition.of("t", row(i * 40))).toCompletableFuture());
    }
    for (CompletableFuture<TabletInfo> w : waiting) {
      CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, w::join);
      assertTrue(Refusal.unwrap(e) instanceof java.util.concurrent.TimeoutException, e.toString());
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertTrue(ms < 3_000, "twenty requests waiting on a master that does not answer failed after " + ms
        + " ms, not one ask timeout (500 ms)");
  }

  @Test
  void aBatchOverThousandsOfTabletsCostsAFewLookups() {
    masters.set(directory(3, Map.of("t", 5_000)));
    TabletLocations l = locations(10_000);
    List<byte[]> rows = new ArrayList<>();
    for (int i = 4_999; i >= 0; i--) {
      rows.add(row(i));
    }
    l.cover("t", rows).toCompletableFuture().join();
    // four runs of 1,250 rows side by side, a thousand tablets a lookup: two lookups each
    assertTrue(asked.get() <= 8, "lookups: " + asked.get());
    for (int i = 0; i < 5_000; i++) {
      assertEquals("t-" + i, l.cached("t", row(i)).id());
    }
  }

  @Test
  void theCacheKeepsItsBoundDroppingTheTablesLeastUsed() {
    masters.set(directory(3, Map.of("a", 300, "b", 300, "c", 300)));
    TabletLocations l = locations(400);
    l.cover("a", List.of(row(0))).toCompletableFuture().join();
    assertEquals(300, l.held());
    l.cover("b", List.of(row(0))).toCompletableFuture().join();
    assertTrue(l.held() <= 400, "held " + l.held());
    assertNull(l.cached("a", row(1)), "the table least recently used went");
    assertEquals("b-1", l.cached("b", row(1)).id());
    l.cover("c", List.of(row(0))).toCompletableFuture().join();
    assertTrue(l.held() <= 400, "held " + l.held());
    assertEquals("c-299", l.cached("c", row(299)).id());
  }

  @Test
  void reversedPositionsFindTheTabletBelowARow() {
    masters.set(directory(3, Map.of("t", 1_000)));
    TabletLocations l = locations(10_000);
    assertEquals("t-999", join(l.locate(new TabletPosition("t", new byte[0], true))).id());
    assertEquals("t-744", l.cached(new TabletPosition("t", row(745), true)).id(), "and those before it");
    assertEquals("t-9", join(l.locate(new TabletPosition("t", row(10), true))).id());
    assertEquals(2, asked.get());
    assertEquals("t-8", l.cached(new TabletPosition("t", row(9), true)).id(), "came before t-9");
    assertEquals("t-9", l.cached(new TabletPosition("t", row(10), true)).id(), "ends at r000010");
    assertNull(l.cached(new TabletPosition("t", "r000010a".getBytes(StandardCharsets.UTF_8), true)),
        "t-10 was not looked up");
  }

  @Test
  void aTableMadeAgainUnderItsNameIsAnotherTable() {
    masters.set(directory(3, Map.of("t", 1_000), 100, ""));
    TabletLocations l = locations(10_000);
    assertEquals("t-5", join(l.locate(TabletPosition.of("t", row(5)))).id());
    masters.set(directory(9, Map.of("t", 1_000), 200, "again-"));
    // a lookup elsewhere in the table answers of the new one: what was held of the old goes
    assertEquals("t-again-700", join(l.locate(TabletPosition.of("t", row(700)))).id());
    assertNull(l.cached("t", row(5)), "the deleted table's tablet is not routed to");
    assertEquals("t-again-5", join(l.locate(TabletPosition.of("t", row(5)))).id());
    // the node's copy says so too, before any lookup
    masters.set(directory(12, Map.of("t", 1_000), 300, "third-"));
    l.keepTablesOf(masters.get());
    assertNull(l.cached("t", row(5)));
    assertEquals(0, l.held());
  }

  @Test
  void aLookupTheMasterDoesNotAnswerFallsBackToTheCopyButAnUnknownTableDoesNot() {
    masters.set(directory(3, Map.of("t", 10)));
    TabletInfo fromCopy = masters.get().tabletsOf("t").get(4);
    ActorRef<Master.Command> silent = kit.spawn(Behaviors.receiveMessage(c -> Behaviors.same()));
    TabletLocations l = new TabletLocations(silent, kit.system(), Duration.ofMillis(300), 10_000,
        at -> masters.get().locate(at.table(), at.row()));
    assertSame(fromCopy, join(l.locate(TabletPosition.of("t", row(4)))));
    assertNull(l.cached("t", row(4)), "what the copy said is not cached");

    // A node's share holds its own tablets only: the last it holds is not the table's last.
    Directory share = new Directory(3, 100, masters.get().tables(), Map.of("t", List.of(fromCopy)), Map.of());
    TabletLocations fromShare = new TabletLocations(silent, kit.system(), Duration.ofMillis(300), 10_000,
        at -> at.before() ? share.locateBefore(at.table(), at.row()) : share.locate(at.table(), at.row()));
    TabletPosition tableEnd = new TabletPosition("t", new byte[0], true);
    assertSame(fromCopy, share.locateBefore("t", new byte[0]), "the share's last tablet");
    assertThrows(CompletionException.class, () -> join(fromShare.locate(tableEnd)),
        "a tablet that does not hold the position is not taken: the lookup's failure stands");

    TabletLocations unknown = new TabletLocations(locationsMaster(), kit.system(), Duration.ofSeconds(5), 10_000,
        at -> fromCopy);
    CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
        () -> join(unknown.locate(TabletPosition.of("gone", row(1)))));
    assertTrue(Refusal.is(e, ErrorCode.NOT_FOUND), "the master's NOT_FOUND stands: " + e);
  }

  @Test
  void aTableTheMasterDoesNotKnowIsNotFound() {
    masters.set(directory(3, Map.of("t", 2)));
    TabletLocations l = locations(10_000);
    CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
        () -> join(l.locate(TabletPosition.of("gone", row(1)))));
    assertTrue(Refusal.is(e, ErrorCode.NOT_FOUND), e.toString());
    assertEquals(2, l.every("t").toCompletableFuture().join().size());
  }

  /**
   * A cached tablet carries its owner as the lookup gave it, and the owners the master's changes
   * give cached tablets replace it (a node routes a batch to a tablet's owner by this, without a
   * copy of the whole directory); a tablet a change removed (split, merged) is forgotten; a
   * tablet not cached has no owner known.
   */
  @Test
  void aCachedTabletFollowsTheMastersChanges() {
    masters.set(directory(3, Map.of("t", 10)));
    TabletLocations l = locations(10_000);
    TabletInfo t5 = join(l.locate(TabletPosition.of("t", row(5))));
    assertEquals("n1", l.ownerOf(t5));
    TabletInfo t6 = l.cached("t", row(6));
    assertEquals("n1", l.ownerOf(t6), "a neighbour's owner came with it");
    assertNull(l.ownerOf(TabletInfo.empty("t", "t-other", row(5), row(6))), "another tablet at the same rows");

    l.changed(change(4, Map.of("t-5", "n2", "t-unknown", "n3"), java.util.Set.of()));
    assertEquals("n2", l.ownerOf(t5), "moved to n2");
    assertEquals("n1", l.ownerOf(t6));
    assertEquals(1, asked.get(), "no lookup for a change of owner");
    l.fresh("t", row(5), 1).toCompletableFuture().join(); // the master's answer, at version 3, comes late
    assertEquals("n2", l.ownerOf(t5), "an older answer does not bring back an older owner");
    TabletInfo t2 = l.fresh("t", row(2), 1).toCompletableFuture().join().tablets().get(0);
    assertNull(l.ownerOf(t2), "an answer older than a change taken may name an owner it replaced: not trusted");
    l.forgetOwner(t6, "n9");
    assertEquals("n1", l.ownerOf(t6), "a peer that was not the owner asked says nothing of the owner");
    l.forgetOwner(t6, "n1");
    assertNull(l.ownerOf(t6), "the owner asked said it does not serve it");

    l.changed(new io.tabula.actors.master.DirectoryCache.TabletChanges(5, Map.of(), java.util.Set.of(), true));
    assertNull(l.ownerOf(t5), "changes whose events the node lacks: no owner is trusted");
    assertNull(l.ownerOf(t6));
    l.changed(change(6, Map.of("t-6", "n3"), java.util.Set.of()));
    assertEquals("n3", l.ownerOf(t6));

    l.changed(change(7, Map.of(), java.util.Set.of("t-5", "t-x")));
    assertNull(l.cached("t", row(5)), "split: its entry went with the master's change");
    l.changed(change(8, Map.of("t-5", "n3"), java.util.Set.of())); // not cached: nothing to change, nothing added
    assertEquals(5, l.held(), "t-2, t-6 .. t-9");
    masters.set(directory(9, Map.of("t", 10)));
    assertEquals("n1", l.ownerOf(join(l.locate(TabletPosition.of("t", row(5))))), "looked up again");

    // The master's versions went back (its journal lost changes): what the node learnt goes.
    l.changed(new io.tabula.actors.master.DirectoryCache.TabletChanges(2, Map.of(), java.util.Set.of(), true, true));
    assertEquals(0, l.held(), "every entry forgotten");
    masters.set(directory(2, Map.of("t", 10)));
    int before = asked.get();
    TabletInfo again = join(l.locate(TabletPosition.of("t", row(5))));
    assertEquals(before + 1, asked.get(), "looked up at the master");
    assertEquals("n1", l.ownerOf(again), "an answer at the older version is taken, with its owner");
  }

  private static io.tabula.actors.master.DirectoryCache.TabletChanges change(long version, Map<String, String> owners,
      java.util.Set<String> gone) {
    return new io.tabula.actors.master.DirectoryCache.TabletChanges(version, owners, gone, false);
  }
}
