package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tabula.actors.master.ClusterNodes;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.StorageProbe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.JoinSeedNodes;
import org.apache.pekko.cluster.Valid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage root's identity and probe in a node's configuration, and the join-time check
 * that compares them (FENCING-REVIEW H6: nodes on different roots, or on a copy of the root,
 * must not form a cluster; docs/fencing.md's assumption of one shared storage root). Real joins
 * of actor systems in this JVM here; of node processes, the multi-JVM SeparateRootsTest.
 */
class StorageRootCheckTest {
  @TempDir
  Path dir;

  private static Config embedded(Path data) {
    return TabulaNode.embeddedConfig(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", data.toString())));
  }

  @Test
  void aNodesConfigurationCarriesItsRootsIdentityAndTheCheck() throws IOException {
    Path a = dir.resolve("a");
    Config c = embedded(a);
    String id = RootIdentity.read(new FileStorage(a)).orElseThrow().toString();
    assertEquals(id, c.getString(StorageRootCheck.ID), "the root's identity, written by the first node");
    assertEquals(a.toAbsolutePath().toString(), c.getString(StorageRootCheck.NAME));
    assertEquals(StorageRootCheck.class.getName(), c.getString(StorageRootCheck.CHECKER_KEY));
    assertEquals(id, embedded(a).getString(StorageRootCheck.ID), "the next node on the root finds the same");
  }

  @Test
  void aNodeOnAnotherRootIsRefusedNamingBothRoots() {
    Config a = embedded(dir.resolve("a"));
    Config b = embedded(dir.resolve("b"));
    StorageRootCheck check = new StorageRootCheck();
    assertEquals(Valid.getInstance(), check.check(embedded(dir.resolve("a")), a), "the same root");

    String refused = Joins.message(check.check(b, a));
    for (Config c : new Config[] {a, b}) {
      assertTrue(refused.contains(c.getString(StorageRootCheck.NAME) + " (root id "
          + c.getString(StorageRootCheck.ID) + ")"), refused);
    }
    assertTrue(refused.contains("docs/deploy.md"), refused);

    Config none = ConfigFactory.parseMap(Map.of("pekko.version", "1.2.1"));
    assertTrue(Joins.message(check.check(none, a)).contains("has no storage root identity"), "a node without one");
    assertTrue(Joins.message(check.check(a, none)).contains("has no storage root identity"), "a member without one");
  }

  /**
   * A copy of the root, made once the root had its identity ({@code cp -a} of a data folder, a
   * VM image, a restored volume snapshot), has the root's id: the ids alone let a node on it
   * in, and tablets moved to it opened from stale files while its log went where no recovery
   * looks (the multi-JVM SeparateRootsTest lost every row written through it). The probe the
   * joining node wrote on the copy is not on the root: refused, both roots named.
   */
  @Test
  void aNodeOnACopyOfTheRootIsRefusedNamingBothRoots() throws IOException {
    Path a = dir.resolve("a");
    Config member = embedded(a, "n1");
    Path copy = dir.resolve("copy");
    copyTree(a, copy);
    Config joining = embedded(copy, "n2");
    assertEquals(member.getString(StorageRootCheck.ID), joining.getString(StorageRootCheck.ID), "the copy's id");

    String refused = Joins.message(new StorageRootCheck().check(joining, member));
    for (Config c : new Config[] {member, joining}) {
      assertTrue(refused.contains(c.getString(StorageRootCheck.NAME) + " (root id "
          + c.getString(StorageRootCheck.ID) + ")"), refused);
    }
    assertTrue(refused.contains("a copy of this one"), refused);
    assertTrue(refused.contains("docs/deploy.md"), refused);
    assertEquals(Valid.getInstance(), new StorageRootCheck().check(embedded(a, "n3"), member), "a node on the root");
  }

  /**
   * The check as Pekko runs it, on both sides of real joins (in this JVM, on 127.0.0.1): the
   * member reads the joining node's probe on its root, and the joining node checks the member's
   * answer, which carries no probe (a member has no key of the joining node's life). A node on
   * the root joins; a node on a copy of it is refused and shuts down, never a member.
   */
  @Test
  void aJoinOverTheRootIsLetInAndAJoinOverACopyIsRefused() throws Exception {
    Path a = dir.resolve("a");
    List<ActorSystem<Void>> systems = new ArrayList<>();
    try {
      ActorSystem<Void> member = system(a, "n1", systems);
      Cluster.get(member).manager().tell(Join.create(Cluster.get(member).selfMember().address()));
      Joins.awaitUpOrStopping(member);
      assertEquals(MemberStatus.up(), Cluster.get(member).selfMember().status());
      Address seed = Cluster.get(member).selfMember().address();

      Path copy = dir.resolve("copy");
      copyTree(a, copy);
      ActorSystem<Void> onCopy = system(copy, "n2", systems);
      Cluster.get(onCopy).manager().tell(new JoinSeedNodes(List.of(seed)));
      Joins.awaitUpOrStopping(onCopy);
      assertEquals(java.util.Optional.of(CoordinatedShutdown.incompatibleConfigurationDetectedReason()),
          CoordinatedShutdown.get(onCopy).getShutdownReason(), "the node on a copy of the root was let in");

      ActorSystem<Void> onRoot = system(a, "n3", systems);
      Cluster.get(onRoot).manager().tell(new JoinSeedNodes(List.of(seed)));
      Joins.awaitUpOrStopping(onRoot);
      assertEquals(MemberStatus.up(), Cluster.get(onRoot).selfMember().status(), "a node on the root joins");
    } finally {
      Joins.terminate(systems);
    }
  }

  /**
   * A probe is needed only while its node joins: the node deletes it once its join is over,
   * and a node's start deletes the probes its earlier lives left (a join that never ended),
   * but no other node's.
   */
  @Test
  void probesAreDeletedOnceTheirJoinIsOverAndByTheNodesNextStart() throws IOException {
    Path a = dir.resolve("a");
    FileStorage root = new FileStorage(a);
    for (String left : List.of("n1.old1", "n1.old2", "n10.x", "n2.y")) {
      StorageProbe.write(root, left);
    }
    Config c = embedded(a, "n1");
    List<String> probes = StorageProbe.names(root);
    assertEquals(3, probes.size(), probes.toString());
    assertTrue(probes.containsAll(List.of("n10.x", "n2.y")), "other nodes' probes stay: " + probes);
    String own = ClusterNodes.logOf(c.getStringList("pekko.cluster.roles")).orElseThrow();
    assertTrue(probes.contains(own), "this life's probe, named as its log: " + probes);

    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", a.toString(),
        "tabula.node.name", "n1", "tabula.node.grpc-port", 0, "tabula.node.http-port", 0)))) {
      assertEquals(List.of("n10.x", "n2.y"), StorageProbe.names(root), "the started node's probe is gone, and "
          + "the one its earlier configuration left");
    }
  }

  @Test
  void aConfigurationWithoutTheRootsIdentityIsRefusedToEmbed() {
    assertThrows(IllegalArgumentException.class, () -> StorageRoots.identity(ConfigFactory.load()));
  }

  private static Config embedded(Path data, String name) {
    return TabulaNode.embeddedConfig(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", data.toString(),
        "tabula.node.name", name)));
  }

  private static ActorSystem<Void> system(Path data, String name, List<ActorSystem<Void>> started) {
    return Joins.system(embedded(data, name), started);
  }

  /** Copies the folder {@code from} to {@code to} as {@code cp -a} would. */
  private static void copyTree(Path from, Path to) throws IOException {
    try (var files = Files.walk(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
  }
}
