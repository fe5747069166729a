package io.tabula.cluster.sharding;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.persistence.schema.GcPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.collection.immutable.IndexedSeq;
import scala.jdk.javaapi.FutureConverters;

/**
 * Sharding's allocation of a tablet whose owner is Up but whose region the coordinator does not
 * know yet: a node that has just joined, asked for by another node's region (which routes
 * through sharding while it has not yet learned the new node's requests endpoint). On a real
 * one-member cluster named n1; the master is a probe that must not be asked (an owner that is
 * Up keeps its tablets).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class MasterAllocationTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create(ConfigFactory.parseMap(Map.of(
        "pekko.actor.provider", "cluster",
        "pekko.remote.artery.canonical.hostname", "127.0.0.1",
        "pekko.remote.artery.canonical.port", 0,
        "pekko.cluster.roles", ClusterNodes.roles("n1", "127.0.0.1:0", "127.0.0.1:0", "n1.a"))));
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (cluster.selfMember().status() != MemberStatus.up() && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    assertEquals(MemberStatus.up(), cluster.selfMember().status(), "the test's node did not come Up");
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static final TabletInfo T1 = TabletInfo.empty("t", "t-1", new byte[0], new byte[0]);

  /** Table t of one tablet, owned by n1 and serving. */
  private static DirectoryCache directory() {
    DirectoryCache cache = new DirectoryCache();
    cache.offer(new Directory(5, 3, Map.of("t", new TableInfo("t", Map.of("f", GcPolicy.KEEP_ALL), 0)),
        Map.of("t", List.of(T1)), Map.of("t-1", new TabletPlacement("n1", TabletPlacement.State.SERVING, "",
            List.of()))));
    return cache;
  }

  private static Map<ActorRef, IndexedSeq<String>> regions(ActorRef... regions) {
    Map<ActorRef, IndexedSeq<String>> out = new java.util.HashMap<>();
    for (ActorRef r : regions) {
      out.put(r, scala.collection.immutable.Vector$.MODULE$.<String>empty());
    }
    return out;
  }

  /**
   * The allocation waits while its owner has no region, and takes the owner's region as soon as
   * the coordinator shows it (the asking region asks again every retry-interval), not the
   * regions of the moment it was first asked: those never gain the new region, and the tablet
   * waited out the whole patience (15 s) while its node served, and its first request's client
   * gave up.
   */
  @Test
  void aTabletWaitingForItsOwnersRegionGoesThereOnceTheCoordinatorShowsIt() throws Exception {
    TestProbe<Master.Command> master = kit.createTestProbe();
    MasterAllocation allocation = new MasterAllocation(kit.system(), directory(), master.ref());
    ActorRef asking = Adapter.toClassic(kit.createTestProbe().ref());

    CompletableFuture<ActorRef> placed = FutureConverters.asJava(
        allocation.allocateShard(asking, "t-1", regions())).toCompletableFuture();
    Thread.sleep(1000);
    assertEquals(false, placed.isDone(), "n1 has no region yet: the allocation waits");

    // The asking region asks again (every retry-interval), the coordinator now knowing n1's region:
    // it joins the allocation under way.
    ActorRef n1Region = Adapter.toClassic(kit.createTestProbe().ref());
    CompletableFuture<ActorRef> again = FutureConverters.asJava(
        allocation.allocateShard(asking, "t-1", regions(n1Region))).toCompletableFuture();
    assertEquals(n1Region, placed.get(5, TimeUnit.SECONDS), "the owner's region, once it registered");
    assertEquals(n1Region, again.get(5, TimeUnit.SECONDS));
    master.expectNoMessage(Duration.ofMillis(100));
  }

  /**
   * A tablet the node's copy does not hold (only the master's node holds every tablet; another's
   * copy may lag) goes where the master says it is placed, not to whichever region asked; one
   * the master does not know either (a split parent) goes to the region that asked.
   */
  @Test
  void aTabletTheCopyDoesNotHoldGoesWhereTheMasterSays() throws Exception {
    TestProbe<Master.Command> master = kit.createTestProbe();
    MasterAllocation allocation = new MasterAllocation(kit.system(), directory(), master.ref());
    ActorRef asking = Adapter.toClassic(kit.createTestProbe().ref());
    ActorRef n1Region = Adapter.toClassic(kit.createTestProbe().ref());

    CompletableFuture<ActorRef> placed = FutureConverters.asJava(
        allocation.allocateShard(asking, "t-9", regions(n1Region))).toCompletableFuture();
    Master.Place place = master.expectMessageClass(Master.Place.class);
    assertEquals("t-9", place.tabletId());
    place.replyTo().tell(org.apache.pekko.pattern.StatusReply.success("n1"));
    assertEquals(n1Region, placed.get(5, TimeUnit.SECONDS));

    CompletableFuture<ActorRef> unknown = FutureConverters.asJava(
        allocation.allocateShard(asking, "t-gone", regions(n1Region, asking))).toCompletableFuture();
    master.expectMessageClass(Master.Place.class).replyTo().tell(io.tabula.protocol.errors.Refusal.of(
        io.tabula.protocol.errors.ErrorCode.NOT_FOUND, "tablet t-gone is not known").reply());
    assertEquals(asking, unknown.get(5, TimeUnit.SECONDS), "its actor only answers that the row moved");
  }
}
