package io.tabula.actors.tablet;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QuietCompactionTest {
  @Test
  void aQuietTabletCompactsOncePerQuietSpell() {
    QuietCompaction q = new QuietCompaction();
    Map<String, List<String>> two = Map.of("default", List.of("a.sst", "b.sst"));
    q.wrote();
    assertFalse(q.dueAtTick(two), "writes came in since the last tick");
    assertFalse(q.dueAtTick(two), "one quiet tick");
    assertTrue(q.dueAtTick(two), "two quiet ticks");
    assertFalse(q.dueAtTick(two), "once per quiet spell");
    q.wrote();
    assertFalse(q.dueAtTick(two));
    assertFalse(q.dueAtTick(Map.of("default", List.of("a.sst"))));
    assertFalse(q.dueAtTick(Map.of("default", List.of("a.sst"))), "one file per group: nothing to do");
    assertTrue(q.dueAtTick(two));
  }
}
