package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The node's settings as an operator writes them in tabula.node (reference.conf underneath). */
class NodeSettingsTest {
  private static NodeSettings with(String key, String value) {
    Config c = ConfigFactory.parseMap(Map.of("tabula.node." + key, value)).withFallback(ConfigFactory.load());
    return NodeSettings.from(c.getConfig("tabula.node"));
  }

  @Test
  void theMemtableBudgetIsASizeOrAShareOfTheHeap() {
    assertEquals(512L << 20, with("memtable-budget", "512MiB").memtableBudgetBytes());
    long heap = Runtime.getRuntime().maxMemory();
    assertEquals((long) (heap * 25.0 / 100), with("memtable-budget", "25%").memtableBudgetBytes());
    long byDefault = NodeSettings.from(ConfigFactory.load().getConfig("tabula.node")).memtableBudgetBytes();
    assertEquals((long) (heap * 40.0 / 100), byDefault, "40% of the heap by default");
    assertEquals(byDefault, with("memtable-budget", "40%").engineOptions("n1").memtableBytes());
  }

  @Test
  void aBadMemtableBudgetIsRefusedNamingTheKey() {
    for (String bad : new String[] {"lots", "0%", "95%", "-5%", "12kB", "x%"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> with("memtable-budget", bad),
          bad);
      assertTrue(e.getMessage().startsWith("tabula.node.memtable-budget"), e.getMessage());
    }
  }
}
