package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Children's tablet ids: the table's name and 128 bits of a UUID (122 of them random), never the same twice here. */
class TabletIdsTest {
  @Test
  void freshIdsNameTheirTableAndDoNotRepeat() {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 100_000; i++) {
      String id = TabletIds.fresh("orders");
      assertTrue(id.matches("orders-[0-9a-f]{32}"), id);
      seen.add(id);
    }
    assertEquals(100_000, seen.size());
  }
}
