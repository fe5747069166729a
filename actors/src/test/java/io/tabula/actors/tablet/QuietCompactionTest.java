package io.tabula.actors.tablet;

import static io.tabula.actors.tablet.QuietCompaction.Action.COMPACT;
import static io.tabula.actors.tablet.QuietCompaction.Action.FLUSH;
import static io.tabula.actors.tablet.QuietCompaction.Action.FLUSH_AND_COMPACT;
import static io.tabula.actors.tablet.QuietCompaction.Action.NONE;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QuietCompactionTest {
  private static final Map<String, List<String>> ONE = Map.of("default", List.of("a.sst"));
  private static final Map<String, List<String>> TWO = Map.of("default", List.of("a.sst", "b.sst"));
  private static final long MIB = 1L << 20;

  @Test
  void aQuietTabletWithSeveralFilesCompactsOncePerQuietSpell() {
    QuietCompaction q = new QuietCompaction();
    q.wrote();
    assertEquals(NONE, q.atTick(TWO, 0, 10 * MIB), "writes came in since the last tick");
    assertEquals(NONE, q.atTick(TWO, 0, 10 * MIB), "one quiet tick");
    assertEquals(COMPACT, q.atTick(TWO, 0, 10 * MIB), "two quiet ticks");
    assertEquals(NONE, q.atTick(TWO, 0, 10 * MIB), "once per quiet spell");
    q.wrote();
    assertEquals(NONE, q.atTick(ONE, 0, 10 * MIB));
    assertEquals(NONE, q.atTick(ONE, 0, 10 * MIB));
    assertEquals(NONE, q.atTick(ONE, 0, 10 * MIB), "one file per group and no memtable: nothing to do");
  }

  /** What a tablet that wrote, then fell quiet, does at the start of its quiet spell. */
  private static QuietCompaction.Action spellStart(QuietCompaction q, Map<String, List<String>> files, long memtable,
      long fileBytes) {
    q.wrote();
    assertEquals(NONE, q.atTick(files, memtable, fileBytes));
    for (int i = 1; i < QuietCompaction.QUIET_TICKS; i++) {
      assertEquals(NONE, q.atTick(files, memtable, fileBytes));
    }
    return q.atTick(files, memtable, fileBytes);
  }

  @Test
  void aQuietTabletFlushesAMemtableWorthAShareOfItsFilesThenCompacts() {
    QuietCompaction q = new QuietCompaction();
    assertEquals(FLUSH_AND_COMPACT, spellStart(q, ONE, 2 * MIB, 8 * MIB), "2 MiB is a quarter of the files");
    assertEquals(NONE, q.atTick(ONE, 2 * MIB, 8 * MIB), "once per quiet spell");
    assertEquals(FLUSH_AND_COMPACT, spellStart(q, Map.of(), 2 * MIB, 0), "a tablet without files yet");
    assertEquals(COMPACT, spellStart(q, TWO, 2 * MIB, 100 * MIB),
        "under an eighth of its files: no flush, else each burst of writes would have them rewritten");
    assertEquals(NONE, spellStart(q, ONE, 2 * MIB, 100 * MIB));
    assertEquals(NONE, spellStart(q, ONE, MIB / 2, 0), "under the smallest quiet flush");
  }

  @Test
  void aMemtableLeftAfterALongQuietIsFlushedWithoutACompaction() {
    QuietCompaction q = new QuietCompaction();
    q.wrote();
    q.atTick(TWO, 100, 100 * MIB);
    List<QuietCompaction.Action> seen = new java.util.ArrayList<>();
    for (int i = 1; i <= QuietCompaction.LONG_QUIET_TICKS + 5; i++) {
      seen.add(q.atTick(TWO, 100, 100 * MIB));
    }
    assertEquals(COMPACT, seen.get(QuietCompaction.QUIET_TICKS - 1));
    assertEquals(FLUSH, seen.get(QuietCompaction.LONG_QUIET_TICKS - 1));
    assertEquals(2, seen.stream().filter(a -> a != NONE).count(), "nothing else: " + seen);

    q.wrote();
    q.atTick(ONE, 0, MIB);
    for (int i = 1; i <= QuietCompaction.LONG_QUIET_TICKS + 5; i++) {
      assertEquals(NONE, q.atTick(ONE, 0, MIB), "an empty memtable is never flushed");
    }
  }
}
