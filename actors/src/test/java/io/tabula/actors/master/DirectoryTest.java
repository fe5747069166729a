package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The directory's persistent structure against a plain model: random splits, merges,
 * placements, file updates and table changes, after each of which every lookup (by id, by
 * row, backwards, per node) answers as a list searched from the start would.
 */
class DirectoryTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String row(int i) {
    return String.format("r%06d", i);
  }

  /** A table "t" of {@code n} tablets split at r000010, r000020, ... */
  private static Directory table(int n) {
    List<TabletInfo> l = new ArrayList<>();
    byte[] start = new byte[0];
    for (int i = 1; i < n; i++) {
      byte[] end = b(row(i * 10));
      l.add(TabletInfo.empty("t", "t-" + i, start, end));
      start = end;
    }
    l.add(TabletInfo.empty("t", "t-" + n, start, new byte[0]));
    return Directory.EMPTY.withTable(new TableInfo("t", Map.of(), 0), l, n + 1);
  }

  @Test
  void lookupsAgreeWithAPlainListAfterRandomChanges() {
    Random random = new Random(7);
    Directory d = table(1_000);
    d = d.withTable(new TableInfo("u", Map.of(), 0), List.of(TabletInfo.empty("u", "u-1", new byte[0],
        new byte[0])), d.nextTabletNumber());
    int next = 10_000;
    for (int step = 0; step < 1_500; step++) {
      List<TabletInfo> l = d.tabletsOf("t");
      int i = random.nextInt(l.size());
      TabletInfo t = l.get(i);
      long version = d.version();
      switch (random.nextInt(4)) {
        case 0 -> { // split inside the tablet, where there is room
          byte[] at = b(new String(t.startRow(), StandardCharsets.UTF_8) + "m");
          if (t.endRow().length > 0 && java.util.Arrays.compare(at, t.endRow()) >= 0) {
            continue;
          }
          d = DirectoryEvents.apply(d, new Master.TabletSplit("t", t.id(), at, "t-" + next++, "t-" + next++));
        }
        case 1 -> { // merge with the right neighbour
          if (i + 1 >= l.size()) {
            continue;
          }
          d = DirectoryEvents.apply(d, new Master.TabletsMerged("t", t.id(), l.get(i + 1).id(), "t-" + next++));
        }
        case 2 -> d = switch (random.nextInt(5)) {
          case 0 -> DirectoryEvents.apply(d, new Master.TabletsAssigned(Map.of(t.id(), "n" + random.nextInt(5))));
          case 1 -> DirectoryEvents.apply(d, new Master.MoveStarted(t.id(), d.ownerOf(t.id()), "n" + random.nextInt(5)));
          case 2 -> DirectoryEvents.apply(d, new Master.MoveHandedOver(t.id(), "n" + random.nextInt(5)));
          case 3 -> DirectoryEvents.apply(d, new Master.MoveFinished(t.id()));
          default -> DirectoryEvents.apply(d, new Master.TabletOpened(t.id(), d.ownerOf(t.id()),
              "log" + random.nextInt(4), List.of()));
        };
        default -> d = DirectoryEvents.apply(d, new Master.TabletFilesRecorded("t", t.id(),
            Map.of("default", List.of("f" + step)), step));
      }
      assertEquals(version + 1, d.version(), "every change is one version");
      check(d, random);
    }
    Directory gone = DirectoryEvents.apply(d, new Master.TableDeleted("t"));
    checkShares(gone);
    assertEquals(1, gone.tabletCount(), "deleting a table forgets its tablets");
    assertNull(gone.tablet(d.tabletsOf("t").get(0).id()));
    assertEquals(Map.of(), gone.tabletsPerNode(), "and their placements");
  }

  /** Every lookup of {@code d} answers as a linear search of its lists would. */
  private static void check(Directory d, Random random) {
    List<TabletInfo> l = d.tabletsOf("t");
    assertEquals(0, l.get(0).startRow().length, "the first tablet starts at the first row");
    assertEquals(0, l.get(l.size() - 1).endRow().length, "the last one is unbounded");
    for (int k = 1; k < l.size(); k++) {
      assertEquals(0, java.util.Arrays.compare(l.get(k - 1).endRow(), l.get(k).startRow()),
          "tablets cover every row once, in order");
    }
    assertEquals(l.size() + 1, d.tabletCount());
    for (int probe = 0; probe < 20; probe++) {
      TabletInfo t = l.get(random.nextInt(l.size()));
      assertSame(t, d.tablet(t.id()));
      assertSame(t, d.tablet("t", t.id()));
      assertNull(d.tablet("u", t.id()), "a tablet is found only in its own table");
      byte[] r = b(row(random.nextInt(12_000)) + (random.nextBoolean() ? "m" : ""));
      TabletInfo holder = l.stream().filter(x -> x.containsRow(r)).findFirst().orElseThrow();
      assertSame(holder, d.locate("t", r));
      TabletInfo before = null;
      for (TabletInfo x : l) {
        if (java.util.Arrays.compare(x.startRow(), r) < 0
            && (x.endRow().length == 0 || java.util.Arrays.compare(r, x.endRow()) <= 0)) {
          before = x;
        }
      }
      assertSame(before, d.locateBefore("t", r));
    }
    Map<String, Integer> perNode = new java.util.TreeMap<>();
    for (TabletInfo t : d.allTablets()) {
      if (!d.ownerOf(t.id()).isEmpty()) {
        perNode.merge(d.ownerOf(t.id()), 1, Integer::sum);
      }
    }
    assertEquals(perNode, d.tabletsPerNode());
    Map<String, java.util.Set<String>> byOwner = new java.util.TreeMap<>();
    for (TabletInfo t : d.allTablets()) {
      byOwner.computeIfAbsent(d.ownerOf(t.id()), k -> new java.util.TreeSet<>()).add(t.id());
    }
    assertEquals(byOwner.keySet(), new java.util.TreeSet<>(d.owners()), "the owners indexed");
    byOwner.forEach((owner, ids) -> assertEquals(ids, new java.util.TreeSet<>(d.tabletsOwnedBy(owner)),
        "the tablets of " + owner + " indexed"));
    assertEquals(d.placement().keySet().stream().filter(id -> d.tablet(id) == null).toList(), List.of(),
        "no placement outlives its tablet");
    java.util.Set<String> unsettled = new java.util.TreeSet<>();
    java.util.Set<String> logs = new java.util.TreeSet<>();
    for (TabletInfo t : d.allTablets()) {
      if (d.placementOf(t.id()).state() != TabletPlacement.State.SERVING) {
        unsettled.add(t.id());
      }
      logs.addAll(d.placementOf(t.id()).logs());
    }
    assertEquals(unsettled, new java.util.TreeSet<>(d.unsettledTablets()), "the tablets moving indexed");
    for (int k = 0; k < 5; k++) {
      assertEquals(logs.contains("log" + k), d.namesLog("log" + k), "the logs named indexed");
    }
    checkShares(d);
  }

  /**
   * Each node's share holds every table and exactly the tablets whose placement names it (owner,
   * or the other end of a move), with their placements, in row order; its digest, computed from
   * its entries, is the one the directory keeps for it as it changes.
   */
  private static void checkShares(Directory d) {
    for (String node : List.of("n0", "n1", "n2", "n3", "n4", "n5")) {
      Directory share = d.share(node);
      assertEquals(d.version(), share.version());
      assertEquals(d.tables(), share.tables(), "every table");
      for (String table : d.tables().keySet()) {
        List<TabletInfo> expected = d.tabletsOf(table).stream()
            .filter(t -> d.placement().containsKey(t.id()) && d.placementOf(t.id()).nodes().contains(node)).toList();
        assertEquals(expected, share.tabletsOf(table), () -> node + "'s tablets of " + table);
        expected.forEach(t -> assertSame(d.placementOf(t.id()), share.placementOf(t.id())));
      }
      assertEquals(share.digest(), d.shareDigest(node), () -> node + "'s share digest kept as the directory changed");
    }
  }

  @Test
  void aChangeToATableOfManyTabletsKeepsTheRest() {
    Directory d = table(100_000);
    TabletInfo t = d.tabletsOf("t").get(50_000);
    Directory split = DirectoryEvents.apply(d, new Master.TabletSplit("t", t.id(), b(row(500_005)), "a", "b"));
    assertEquals(100_001, split.tabletsOf("t").size());
    assertEquals(t, d.tablet(t.id()), "the directory before the change is unchanged");
    assertNull(split.tablet(t.id()));
    assertEquals("a", split.locate("t", b(row(500_001))).id());
    assertEquals("b", split.locate("t", b(row(500_009))).id());
    assertEquals(new Directory(split.version(), split.nextTabletNumber(), split.tables(), split.tablets(),
        split.placement()), split, "a copy made from its maps equals it");
  }
}
