package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.ActorTestConfig;
import io.tabula.persistence.schema.GcPolicy;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nodes holding only their share of the directory ({@link DirectoryCache} made with a node's
 * name): the master's feed ({@link DirectoryFeed}, on the directories the master's events make)
 * through random assignments, moves, splits, merges across nodes, opens, file updates and table
 * changes, every change serialized as it travels; after each, every node's copy is exactly its
 * share of the master's directory, checked by its digest as it was taken.
 */
class DirectorySharesTest {
  private static final List<String> NODES = List.of("n0", "n1", "n2", "n3");

  @TempDir
  Path dir;

  private ActorTestKit kit;
  private DirectoryFeed feed;

  @BeforeEach
  void start() {
    kit = ActorTestConfig.startWithJournalIn(dir);
    feed = new DirectoryFeed(SerializationExtension.get(Adapter.toClassic(kit.system())));
    feed.recovered();
  }

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private Directory apply(Directory d, Master.Event e) {
    Directory next = DirectoryEvents.apply(d, e);
    feed.applied(d, e, next);
    return next;
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(longs = {11, 12, 13, 14, 15, 16, 17, 18})
  void everyNodesCopyIsItsShareThroughRandomChanges(long seed) {
    Random random = new Random(seed);
    Directory d = Directory.EMPTY;
    List<TabletInfo> initial = new ArrayList<>();
    byte[] start = new byte[0];
    for (int i = 1; i < 40; i++) {
      initial.add(TabletInfo.empty("t", "t-" + i, start, b(String.format("r%04d", i * 100))));
      start = b(String.format("r%04d", i * 100));
    }
    initial.add(TabletInfo.empty("t", "t-40", start, new byte[0]));
    Map<String, DirectoryCache> caches = new LinkedHashMap<>();
    NODES.forEach(n -> caches.put(n, new DirectoryCache(n)));
    d = apply(d, new Master.TableCreated(new TableInfo("t", Map.of("f", GcPolicy.KEEP_ALL), 1L), initial, 41));
    Map<String, String> all = new java.util.TreeMap<>();
    initial.forEach(t -> all.put(t.id(), "n0"));
    d = apply(d, new Master.TabletsAssigned(all));
    publish(d, caches, random);
    int next = 100;
    for (int step = 0; step < 400; step++) {
      List<TabletInfo> l = d.tabletsOf("t");
      int i = random.nextInt(l.size());
      TabletInfo t = l.get(i);
      String node = NODES.get(random.nextInt(NODES.size()));
      TabletPlacement p = d.placementOf(t.id());
      Master.Event e = switch (random.nextInt(13)) {
        case 0 -> new Master.TabletsAssigned(Map.of(t.id(), node));
        case 1 -> new Master.MoveStarted(t.id(), p.owner(), node);
        case 2 -> p.state() == TabletPlacement.State.PREPARING ? new Master.MoveHandedOver(t.id(), p.peer())
            : new Master.MoveHandedOver(t.id(), node);
        case 3 -> new Master.MoveFinished(t.id());
        case 4 -> {
          byte[] at = b(new String(t.startRow(), StandardCharsets.UTF_8) + "m" + step);
          yield t.endRow().length > 0 && java.util.Arrays.compare(at, t.endRow()) >= 0 ? new Master.MoveFinished(t.id())
              : new Master.TabletSplit("t", t.id(), at, "t-" + next++, "t-" + next++);
        }
        case 5 -> i + 1 < l.size() ? new Master.TabletsMerged("t", t.id(), l.get(i + 1).id(), "t-" + next++)
            : new Master.MoveFinished(t.id());
        case 6 -> new Master.TabletOpened(t.id(), p.owner(), "log-" + node, List.of());
        case 7 -> new Master.TabletFilesRecorded("t", t.id(), Map.of("default", List.of("f" + step)), step);
        case 8 -> i + 1 < l.size() ? new Master.MergeStarted("t", t.id(), l.get(i + 1).id(), "t-" + next++)
            : new Master.MoveFinished(t.id());
        case 9 -> i + 1 < l.size() ? new Master.MergeAbandoned(t.id(), l.get(i + 1).id()) : new Master.MoveFinished(t.id());
        case 10 -> new Master.TabletClosed(t.id(), "log-" + node);
        case 11 -> new Master.TabletsOpened(List.of(new Master.TabletOpened(t.id(), p.owner(), "log-" + node, List.of()),
            new Master.TabletOpened(l.get(random.nextInt(l.size())).id(), node, "log-" + node, List.of("log-n0"))));
        default -> random.nextBoolean() ? new Master.FamiliesChanged("t", Map.of("f", GcPolicy.KEEP_ALL, "g" + step,
            GcPolicy.KEEP_ALL)) : d.table("u") == null
            ? new Master.TableCreated(new TableInfo("u", Map.of("f", GcPolicy.KEEP_ALL), 1L),
                List.of(TabletInfo.empty("u", "u-" + next, new byte[0], new byte[0])), ++next)
            : new Master.TableDeleted("u");
      };
      d = apply(d, e);
      if (d.table("u") != null && d.ownerOf(d.tabletsOf("u").get(0).id()).isEmpty()) {
        d = apply(d, new Master.TabletsAssigned(Map.of(d.tabletsOf("u").get(0).id(), node)));
      }
      if (random.nextInt(3) == 0) {
        publish(d, caches, random);
      }
    }
    publish(d, caches, random);
  }

  /**
   * The master ran in this node's JVM, which held its whole directory; once changes come without
   * it (the master moved), the copy is cut to the node's share and goes on from there.
   */
  @Test
  void aWholeCopyIsCutToItsShareOnceChangesComeWithoutTheMastersDirectory() {
    Directory d = apply(Directory.EMPTY, new Master.TableCreated(new TableInfo("t", Map.of("f", GcPolicy.KEEP_ALL),
        1L), List.of(TabletInfo.empty("t", "t-1", new byte[0], b("m")), TabletInfo.empty("t", "t-2", b("m"),
        new byte[0])), 3));
    d = apply(d, new Master.TabletsAssigned(Map.of("t-1", "n1", "t-2", "n2")));
    DirectoryCache cache = new DirectoryCache("n1");
    cache.receive(feed.next(d, System.nanoTime(), false), null, kit.system()); // in the master's JVM: with it
    assertTrue(cache.get() == d && cache.isMasters(), "the master's own directory, whole");
    d = apply(d, new Master.MoveStarted("t-2", "n2", "n1"));
    cache.receive(ActorTestConfig.roundTrip(kit, feed.next(d, System.nanoTime(), false)), null, kit.system());
    assertEquals(d.share("n1"), cache.get(), "cut to its share, and the change applied");
    assertEquals(2, cache.get().tabletCount(), "its own tablet and the one moving to it");
    assertTrue(!cache.isMasters());
    d = apply(d, new Master.MoveHandedOver("t-2", "n1"));
    d = apply(d, new Master.MoveFinished("t-2"));
    d = apply(d, new Master.TabletsAssigned(Map.of("t-1", "n2")));
    cache.receive(ActorTestConfig.roundTrip(kit, feed.next(d, System.nanoTime(), false)), null, kit.system());
    assertEquals(d.share("n1"), cache.get());
    assertEquals(List.of("t-2"), cache.get().tabletsOf("t").stream().map(TabletInfo::id).toList());
    cache.receive(ActorTestConfig.roundTrip(kit, feed.heartbeat(d, System.nanoTime())), null, kit.system());
    assertEquals(0, cache.divergences(), "its share's digest is the master's for it");
  }

  /**
   * Publishes the change the feed has, serialized, to every cache but one that misses it now and
   * then (it catches up at the next with the events since its version, as it asks the master);
   * each cache that took it must then be its node's share.
   */
  private void publish(Directory d, Map<String, DirectoryCache> caches, Random random) {
    DirectoryFeed.Change made = feed.next(d, System.nanoTime(), false);
    if (made == null) {
      return; // nothing since the last one
    }
    DirectoryFeed.Change c = ActorTestConfig.roundTrip(kit, made);
    caches.forEach((node, cache) -> {
      if (cache.get().version() == 0) { // a node starting: its share whole, as the master answers
        DirectoryFeed.Changes ch = feed.since(d, -1, node, System.nanoTime());
        cache.take(shareOf(ch, d, node), ch.digest(), ch.shares(), false);
        assertEquals(d.share(node), cache.get());
        return;
      }
      long held = cache.get().version();
      if (held != c.from() && random.nextInt(10) != 0) {
        return; // it goes on missing them
      }
      if (held != c.from()) { // it missed some: the events since its version, as the master answers
        DirectoryFeed.Changes ch = ActorTestConfig.roundTrip(kit, feed.since(d, held, node, System.nanoTime()));
        assertTrue(cache.apply(ch.from(), ch.events(), ch.shares(), ch.to(), ch.digest(), false), () -> node + " caught up");
        assertEquals(d.share(node), cache.get(), () -> node + "'s copy caught up is its share at " + d.version());
        return;
      }
      if (random.nextInt(8) == 0) {
        return; // misses this one
      }
      assertTrue(cache.apply(c.from(), c.events(), c.shares(), c.to(), c.digest(), true), () -> node + " took " + c
          + " at " + held + ": " + c.events() + " " + c.shares() + " digest " + cache.get().digest() + " vs share "
          + d.shareDigest(node));
      assertEquals(d.share(node), cache.get(), () -> node + "'s copy is its share at " + d.version());
      assertEquals(d.shareDigest(node), cache.get().digest());
    });
  }

  /** Node {@code node}'s share as a node starting gets it: the master's answer's blob, read back. */
  private Directory shareOf(DirectoryFeed.Changes ch, Directory d, String node) {
    assertTrue(ch.key().startsWith("s"), () -> "its share: " + ch);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int i = 0; i < ch.chunks(); i++) {
      bytes.writeBytes(feed.chunk(ch.key(), i).bytes());
    }
    Directory share = (Directory) SerializationExtension.get(Adapter.toClassic(kit.system()))
        .deserialize(bytes.toByteArray(), ch.serializerId(), ch.manifest()).get();
    assertEquals(d.share(node), share);
    assertEquals(d.shareDigest(node), ch.shares().tablesDigest() + ch.shares().sumOf(node, -1));
    return share;
  }
}
