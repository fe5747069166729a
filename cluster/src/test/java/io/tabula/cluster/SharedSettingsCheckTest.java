package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import java.nio.file.Path;
import java.util.Map;
import org.apache.pekko.cluster.Valid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The join-time check that the nodes of a cluster share the settings they reason about each
 * other with ({@link SharedSettingsCheck}): the check's verdicts, and real joins of actor
 * systems in this JVM (on 127.0.0.1), where a node with another sweep grace is refused and
 * shuts down, never a member.
 */
class SharedSettingsCheckTest {
  private static final String GRACE = "tabula.master.sweep-files-grace";

  @TempDir
  Path dir;

  private Config embedded(String name) {
    return TabulaNode.embeddedConfig(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.resolve("root")
        .toString(), "tabula.node.name", name)));
  }

  private static Config withGrace(Config c, String grace) {
    return c.withValue(GRACE, ConfigValueFactory.fromAnyRef(grace));
  }

  @Test
  void aNodesConfigurationNamesTheCheck() {
    assertEquals(SharedSettingsCheck.class.getName(), embedded("n1").getString(SharedSettingsCheck.CHECKER_KEY));
  }

  @Test
  void theSameGracePassesInAnySpellingAndAnotherIsRefusedNamingBoth() {
    SharedSettingsCheck check = new SharedSettingsCheck();
    Config own = embedded("n1");
    assertEquals(Valid.getInstance(), check.check(embedded("n2"), own), "the default on both passes");
    assertEquals(Valid.getInstance(), check.check(withGrace(own, "900s"), withGrace(own, "15m")),
        "one duration, written two ways");

    String refused = Joins.message(check.check(withGrace(own, "1h"), withGrace(own, "15m")));
    assertTrue(refused.contains(GRACE + ": the other node has PT1H, this node PT15M"), refused);
    assertTrue(refused.contains("docs/deploy.md"), refused);

    String missing = Joins.message(check.check(ConfigFactory.empty(), own));
    assertTrue(missing.contains("the other node has no valid value"), missing);
    String garbled = Joins.message(check.check(withGrace(own, "soon"), own));
    assertTrue(garbled.contains("the other node has no valid value"), garbled);
  }

  @Test
  void aNodeWithAnotherGraceIsRefusedAtJoinAndANodeWithTheSameJoins() throws Exception {
    Joins.refusedThenJoins(embedded("n1"), withGrace(embedded("n2"), "1h"), embedded("n3"),
        "a node with another sweep grace was let in");
  }
}
