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
import io.tabula.actors.master.TabletLookup;
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
 * stand-in actor that answers {@code NeverWritten} as the real master does
 * ({@link TabletLookup#neverWritten}) from the directory the test gives it.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class UnopenedTabletsTest {
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

  /** A master whose directory is {@code d}, answering NeverWritten as the real one does. */
  private ActorRef<Master.Command> master(Directory d) {
    Behavior<Master.Command> b = Behaviors.receiveMessage(c -> {
      if (c instanceof Master.NeverWritten w) {
        w.replyTo().tell(TabletLookup.neverWritten(d, w.ids()));
      }
      return Behaviors.same();
    });
    return kit.spawn(b);
  }

  /** A node whose own copy of the directory does not hold table t (it need not: only the master's node holds every tablet). */
  private UnopenedTablets unopened(ActorRef<Master.Command> master) {
    try {
      return new UnopenedTablets(new LocalTablets(), new DirectoryCache(), new FileStorage(dir), io, master,
          kit.system(), Duration.ofMillis(500));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static boolean join(java.util.concurrent.CompletionStage<Boolean> s) {
    return s.toCompletableFuture().join();
  }

  @Test
  void aTabletWithoutAManifestTheMasterHasUnwrittenIsPassedBy() throws Exception {
    UnopenedTablets u = unopened(master(directory(List.of())));
    assertTrue(join(u.holdsNothing(A)), "no manifest; the master has it with no file and no log");
    assertEquals(Set.of("t-1", "t-2"), u.holdingNothing(List.of(A, B)).toCompletableFuture().join());

    // A tablet that opened has its manifest on the storage: asked.
    Storage storage = new FileStorage(dir);
    storage.createDirectories(Tablet.dirOf("t", "t-1"));
    try (var f = storage.create(ManifestCodec.path(Tablet.dirOf("t", "t-1"), 1))) {
      f.append(new byte[] {1});
    }
    assertFalse(join(u.holdsNothing(A)), "a tablet with a manifest is asked");
    assertEquals(Set.of("t-2"), u.holdingNothing(List.of(A, B)).toCompletableFuture().join());
    assertEquals(4, u.passedBy(), "A, A and B, then B");
  }

  @Test
  void aTabletALogNamesIsAsked() {
    UnopenedTablets u = unopened(master(directory(List.of("n1.abc"))));
    assertFalse(join(u.holdsNothing(B)), "a log may hold its writes");
    assertEquals(Set.of("t-1"), u.holdingNothing(List.of(A, B)).toCompletableFuture().join());
  }

  /**
   * Tablets the master no longer has (the table was deleted and made again, or they split) are
   * asked (they answer that the rows moved, and the request looks again), not passed by as
   * empty.
   */
  @Test
  void aTabletTheMastersDirectoryNoLongerHasIsAsked() {
    UnopenedTablets u = unopened(master(Directory.EMPTY));
    assertFalse(join(u.holdsNothing(A)), "a tablet of a table deleted since");
    assertEquals(Set.of(), u.holdingNothing(List.of(A, B)).toCompletableFuture().join());
  }

  @Test
  void withoutTheMastersAnswerEveryTabletIsAsked() {
    UnopenedTablets u = unopened(kit.spawn(Behaviors.<Master.Command>ignore()));
    assertFalse(join(u.holdsNothing(A)), "a master that does not answer");
    assertEquals(Set.of(), u.holdingNothing(List.of(A, B)).toCompletableFuture().join());
    assertEquals(0, u.passedBy());
  }

  /** A whole-table request over more tablets than one ask names asks the master in parts, and passes every one by. */
  @Test
  void manyTabletsAreConfirmedInParts() {
    int n = TabletLookup.MOST_TABLETS * 2 + 5;
    List<TabletInfo> tablets = new java.util.ArrayList<>();
    Map<String, TabletPlacement> placements = new java.util.HashMap<>();
    for (int i = 0; i < n; i++) {
      tablets.add(TabletInfo.empty("t", "t-" + i, i == 0 ? new byte[0] : bytes(String.format("r%05d", i)),
          i == n - 1 ? new byte[0] : bytes(String.format("r%05d", i + 1))));
      placements.put("t-" + i, new TabletPlacement("n1", TabletPlacement.State.SERVING, "", List.of()));
    }
    Directory d = new Directory(5, n + 1, Map.of("t", new TableInfo("t", Map.of("f", GcPolicy.KEEP_ALL), 0)),
        Map.of("t", tablets), placements);
    java.util.concurrent.atomic.AtomicInteger asks = new java.util.concurrent.atomic.AtomicInteger();
    ActorRef<Master.Command> master = kit.spawn(Behaviors.<Master.Command>receiveMessage(c -> {
      if (c instanceof Master.NeverWritten w) {
        asks.incrementAndGet();
        w.replyTo().tell(TabletLookup.neverWritten(d, w.ids()));
      }
      return Behaviors.same();
    }));
    assertEquals(n, unopened(master).holdingNothing(tablets).toCompletableFuture().join().size());
    assertEquals(3, asks.get());
  }

  /**
   * The master is asked only after the storage look (the argument rests on that order: a tablet
   * the master still has after the look was in its directory at the look).
   */
  @Test
  void theMasterIsAskedAfterTheLook() throws Exception {
    List<String> order = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    Storage looked = new io.tabula.persistence.storage.ForwardingStorage(new FileStorage(dir)) {
      @Override
      public List<String> list(String folder) throws java.io.IOException {
        order.add("look " + folder);
        return super.list(folder);
      }
    };
    Directory d = directory(List.of());
    ActorRef<Master.Command> master = kit.spawn(Behaviors.<Master.Command>receiveMessage(c -> {
      if (c instanceof Master.NeverWritten w) {
        order.add("ask " + w.ids());
        w.replyTo().tell(TabletLookup.neverWritten(d, w.ids()));
      }
      return Behaviors.same();
    }));
    UnopenedTablets u = new UnopenedTablets(new LocalTablets(), new DirectoryCache(), looked, io, master, kit.system(),
        Duration.ofMillis(500));
    assertEquals(Set.of("t-1", "t-2"), u.holdingNothing(List.of(A, B)).toCompletableFuture().join());
    assertEquals(List.of("look " + Tablet.dirOf("t", "t-1"), "look " + Tablet.dirOf("t", "t-2"), "ask [t-1, t-2]"),
        order);
  }
}
