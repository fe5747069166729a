package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.RootIdentity;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.apache.pekko.cluster.ConfigValidation;
import org.apache.pekko.cluster.Invalid;
import org.apache.pekko.cluster.Valid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage root's identity in a node's configuration, and the join-time check that
 * compares it (FENCING-REVIEW H6: nodes on different roots must not form a cluster). The
 * refusal of a real join is the multi-JVM SeparateRootsTest.
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

    String refused = message(check.check(b, a));
    for (Config c : new Config[] {a, b}) {
      assertTrue(refused.contains(c.getString(StorageRootCheck.NAME) + " (root id "
          + c.getString(StorageRootCheck.ID) + ")"), refused);
    }
    assertTrue(refused.contains("docs/deploy.md"), refused);

    Config none = ConfigFactory.parseMap(Map.of("pekko.version", "1.2.1"));
    assertTrue(message(check.check(none, a)).contains("has no storage root identity"), "a node without one");
    assertTrue(message(check.check(a, none)).contains("has no storage root identity"), "a member without one");
  }

  @Test
  void aConfigurationWithoutTheRootsIdentityIsRefusedToEmbed() {
    assertThrows(IllegalArgumentException.class, () -> StorageRoots.identity(ConfigFactory.load()));
  }

  private static String message(ConfigValidation v) {
    if (!(v instanceof Invalid invalid)) {
      throw new AssertionError("expected a refusal, was " + v);
    }
    return String.join("; ", scala.jdk.javaapi.CollectionConverters.asJava(invalid.errorMessages()));
  }
}
