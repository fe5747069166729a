package io.tabula.cluster.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.DirectoryFeed;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.actors.tablet.LocalTablets;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.tablet.ManifestCodec;
import io.tabula.persistence.tablet.Tablet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * When a request passes a tablet by as never opened (docs/cluster.md, "Tablets open when first
 * asked"), and when it asks the tablet instead: the storage is a real folder; the master is a
 * stand-in actor that answers {@code GetChanges} with what the test gives it (its answers are
 * what the real master's are: tested in {@code DirectoryFeedTest}).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class UnopenedTabletsTest {
  private static final Duration GRACE = Duration.ofMinutes(15);

  @TempDir
  Path dir;

  private final ActorTestKit kit = ActorTestKit.create();
  private final java.util.concurrent.ExecutorService io = Executors.newFixedThreadPool(2);

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
    io.shutdownNow();
  }

  private static final TabletInfo A = TabletInfo.empty("t", "t-1", new byte[0], bytes("m"));
  private static final TabletInfo B = TabletInfo.empty("t", "t-2", bytes("m"), new byte[0]);

  private static byte[] bytes(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** Table t of tablets A and B on n1, at version 5; {@code logsOfB} names B's logs. */
  private static Directory directory(List<String> logsOfB) {
    return new Directory(5, 3, Map.of("t", new TableInfo("t", Map.of("f", GcPolicy.KEEP_ALL), 0)),
        Map.of("t", List.of(A, B)), Map.of("t-1", new TabletPlacement("n1", TabletPlacement.State.SERVING, "",
            List.of()), "t-2", new TabletPlacement("n1", TabletPlacement.State.SERVING, "", logsOfB)));
  }

  /** A master that answers each GetChanges with {@code answer} of the version asked from. */
  private ActorRef<Master.Command> master(Function<Long, DirectoryFeed.Changes> answer) {
    Behavior<Master.Command> b = Behaviors.receiveMessage(c -> {
      if (c instanceof Master.GetChanges g) {
        g.replyTo().tell(answer.apply(g.since()));
      }
      return Behaviors.same();
    });
    return kit.spawn(b);
  }

  /** The master's directory is the copy's: no change since. */
  private static DirectoryFeed.Changes nothingNew(long since) {
    return new DirectoryFeed.Changes(since, since, 0, List.of(), null, 0, 0, "");
  }

  private UnopenedTablets unopened(DirectoryCache cache, ActorRef<Master.Command> master, Duration grace) {
    try {
      return new UnopenedTablets(new LocalTablets(), cache, new FileStorage(dir), grace, io, master, kit.system(),
          Duration.ofMillis(500));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static boolean join(java.util.concurrent.CompletionStage<Boolean> s) {
    return s.toCompletableFuture().join();
  }

  @Test
  void aTabletWithoutAManifestInACopyTheMasterConfirmedIsPassedBy() throws Exception {
    DirectoryCache cache = new DirectoryCache();
    cache.offer(directory(List.of()));
    UnopenedTablets u = unopened(cache, master(UnopenedTabletsTest::nothingNew), GRACE);
    long since = System.nanoTime();
    assertTrue(join(u.holdsNothing(A, since)), "no manifest, no log, the copy confirmed by an ask after the start");
    assertEquals(Set.of("t-1", "t-2"), u.holdingNothing(List.of(A, B), since).toCompletableFuture().join());

    // A tablet that opened has its manifest on the storage: asked.
    Storage storage = new FileStorage(dir);
    storage.createDirectories(Tablet.dirOf("t", "t-1"));
    try (var f = storage.create(ManifestCodec.path(Tablet.dirOf("t", "t-1"), 1))) {
      f.append(new byte[] {1});
    }
    assertFalse(join(u.holdsNothing(A, System.nanoTime())), "a tablet with a manifest is asked");
    assertEquals(Set.of("t-2"), u.holdingNothing(List.of(A, B), System.nanoTime()).toCompletableFuture().join());
  }

  @Test
  void aTabletALogNamesIsAsked() {
    DirectoryCache cache = new DirectoryCache();
    cache.offer(directory(List.of("n1.abc")));
    UnopenedTablets u = unopened(cache, master(UnopenedTabletsTest::nothingNew), GRACE);
    assertFalse(join(u.holdsNothing(B, System.nanoTime())), "a log may hold its writes");
  }

  /**
   * The copy held tablets the master no longer has (the table was deleted and made again):
   * after the ask, the copy no longer holds them, and they are asked (they answer that the
   * rows moved, and the request looks again), not passed by as empty.
   */
  @Test
  void aTabletTheMastersDirectoryNoLongerHasIsAsked() {
    DirectoryCache cache = new DirectoryCache();
    cache.offer(directory(List.of()));
    UnopenedTablets u = unopened(cache, master(since -> new DirectoryFeed.Changes(since, since + 1, 0,
        List.of(new Master.TableDeleted("t")), null, 0, 0, "")), GRACE);
    assertFalse(join(u.holdsNothing(A, System.nanoTime())), "a tablet of a table deleted since");
    assertEquals(6, cache.get().version(), "the copy took the master's change");
  }

  @Test
  void withoutTheMastersAnswerEveryTabletIsAsked() {
    DirectoryCache cache = new DirectoryCache();
    cache.offer(directory(List.of()));
    UnopenedTablets u = unopened(cache, kit.spawn(Behaviors.<Master.Command>ignore()), GRACE);
    assertFalse(join(u.holdsNothing(A, System.nanoTime())), "a master that does not answer");
    assertEquals(Set.of(), u.holdingNothing(List.of(A, B), System.nanoTime()).toCompletableFuture().join());
    assertEquals(0, u.passedBy());
  }

  /** A copy not confirmed as the master's within a quarter of the sweep's grace: asked (its files may be swept). */
  @Test
  void aCopyNotConfirmedRecentlyEnoughPassesNothingBy() {
    DirectoryCache cache = new DirectoryCache();
    cache.offer(directory(List.of()));
    UnopenedTablets u = unopened(cache, master(UnopenedTabletsTest::nothingNew), Duration.ZERO);
    assertFalse(join(u.holdsNothing(A, System.nanoTime())));
  }
}
