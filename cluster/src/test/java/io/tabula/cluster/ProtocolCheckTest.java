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
 * The join-time check that every node of a cluster speaks one version of Tabula's internal
 * protocol ({@link ProtocolCheck}): the key each node's configuration carries, the check's
 * verdicts, and real joins of actor systems in this JVM (on 127.0.0.1), where a node of
 * another version is refused and shuts down, never a member.
 */
class ProtocolCheckTest {
  @TempDir
  Path dir;

  private Config embedded(String name) {
    return TabulaNode.embeddedConfig(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.resolve("root")
        .toString(), "tabula.node.name", name)));
  }

  @Test
  void aNodesConfigurationCarriesItsProtocolVersionAndTheCheck() {
    Config c = embedded("n1");
    assertEquals(ProtocolCheck.VERSION, c.getInt(ProtocolCheck.KEY));
    assertEquals(ProtocolCheck.class.getName(), c.getString(ProtocolCheck.CHECKER_KEY));
  }

  @Test
  void nodesOfOneVersionPassAndOthersAreRefusedNamingBothVersions() {
    ProtocolCheck check = new ProtocolCheck();
    Config own = embedded("n1");
    assertEquals(Valid.getInstance(), check.check(embedded("n2"), own), "the same version passes");

    String refused = Joins.message(check.check(own.withValue(ProtocolCheck.KEY, ConfigValueFactory.fromAnyRef(
        ProtocolCheck.VERSION + 1)), own));
    assertTrue(refused.contains("the other node speaks version " + (ProtocolCheck.VERSION + 1)), refused);
    assertTrue(refused.contains("this node version " + ProtocolCheck.VERSION), refused);
    assertTrue(refused.contains("docs/deploy.md"), refused);

    String before = Joins.message(check.check(ConfigFactory.empty(), own));
    assertTrue(before.contains("version 1 (a Tabula from before this check"), before);
  }

  @Test
  void aNodeOfAnotherVersionIsRefusedAtJoinAndANodeOfThisOneJoins() throws Exception {
    Joins.refusedThenJoins(embedded("n1"), embedded("n2").withValue(ProtocolCheck.KEY,
        ConfigValueFactory.fromAnyRef(ProtocolCheck.VERSION + 1)), embedded("n3"),
        "a node of another protocol version was let in");
  }
}
