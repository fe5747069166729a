package io.tabula.client;

import static io.tabula.client.Fixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The request a broken scan goes on with. Besides the cases written out, a randomized
 * check compares, for row sets of keys and ranges with every kind of bound, forward and
 * reversed, with and without a limit, the rows of the resumed request with the rows of the
 * original one that were not yet delivered, over a small universe of keys.
 */
class ScanResumeTest {
  private static final String TABLE = "projects/p/instances/i/tables/t";

  @Test
  void nothingDeliveredYetIsTheOriginalRequest() {
    ReadRowsRequest r = request(RowSet.getDefaultInstance(), 0, false);
    assertSame(r, ScanResume.after(r, null, 0));
  }

  @Test
  void aWholeTableScanGoesOnAfterTheLastRow() {
    assertEquals(rows(range().setStartKeyOpen(utf8("k"))),
        ScanResume.after(request(RowSet.getDefaultInstance(), 0, false), utf8("k"), 3).getRows());
    assertEquals(rows(range().setEndKeyOpen(utf8("k"))),
        ScanResume.after(request(RowSet.getDefaultInstance(), 0, true), utf8("k"), 3).getRows(),
        "reversed: the rows before the last one");
  }

  @Test
  void keysAlreadyPassedAreDropped() {
    RowSet keys = RowSet.newBuilder().addRowKeys(utf8("a")).addRowKeys(utf8("c")).addRowKeys(utf8("e")).build();
    assertEquals(RowSet.newBuilder().addRowKeys(utf8("e")).build(),
        ScanResume.after(request(keys, 0, false), utf8("c"), 2).getRows());
    assertEquals(RowSet.newBuilder().addRowKeys(utf8("a")).build(),
        ScanResume.after(request(keys, 0, true), utf8("c"), 2).getRows());
    assertNull(ScanResume.after(request(keys, 0, false), utf8("e"), 3), "nothing left to read");
  }

  @Test
  void forwardRangesAreCutAfterTheLastRow() {
    assertEquals(range().setStartKeyOpen(utf8("c")).setEndKeyOpen(utf8("m")).build(),
        resumedRange(range().setStartKeyClosed(utf8("a")).setEndKeyOpen(utf8("m")), "c", false));
    assertEquals(range().setStartKeyOpen(utf8("c")).setEndKeyClosed(utf8("m")).build(),
        resumedRange(range().setStartKeyOpen(utf8("a")).setEndKeyClosed(utf8("m")), "c", false));
    assertEquals(range().setStartKeyOpen(utf8("c")).build(), resumedRange(range(), "c", false));
    assertEquals(range().setStartKeyOpen(utf8("c")).setEndKeyOpen(ByteString.EMPTY).build(),
        resumedRange(range().setStartKeyClosed(utf8("c")).setEndKeyOpen(ByteString.EMPTY), "c", false),
        "an empty open end is no end");
    RowRange later = range().setStartKeyClosed(utf8("d")).setEndKeyOpen(utf8("f")).build();
    assertEquals(later, resumedRange(later.toBuilder(), "c", false), "a range after the last row is kept whole");
  }

  @Test
  void forwardRangesEndingAtOrBeforeTheLastRowAreDropped() {
    ReadRowsRequest r = request(RowSet.newBuilder()
        .addRowRanges(range().setStartKeyClosed(utf8("a")).setEndKeyOpen(utf8("c")))
        .addRowRanges(range().setStartKeyClosed(utf8("a")).setEndKeyClosed(utf8("c")))
        .addRowRanges(range().setStartKeyClosed(utf8("x")).setEndKeyOpen(utf8("z"))).build(), 0, false);
    assertEquals(rows(range().setStartKeyClosed(utf8("x")).setEndKeyOpen(utf8("z"))),
        ScanResume.after(r, utf8("c"), 1).getRows());
  }

  @Test
  void reversedRangesAreCutBeforeTheLastRow() {
    assertEquals(range().setStartKeyClosed(utf8("a")).setEndKeyOpen(utf8("f")).build(),
        resumedRange(range().setStartKeyClosed(utf8("a")).setEndKeyOpen(utf8("m")), "f", true));
    assertEquals(range().setStartKeyClosed(utf8("a")).setEndKeyOpen(utf8("f")).build(),
        resumedRange(range().setStartKeyClosed(utf8("a")).setEndKeyClosed(utf8("f")), "f", true),
        "a closed end at the last row becomes an open one");
    assertEquals(range().setStartKeyOpen(utf8("e")).setEndKeyOpen(utf8("f")).build(),
        resumedRange(range().setStartKeyOpen(utf8("e")), "f", true));
    RowRange earlier = range().setStartKeyClosed(utf8("a")).setEndKeyClosed(utf8("c")).build();
    assertEquals(earlier, resumedRange(earlier.toBuilder(), "f", true), "a range before the last row is kept whole");
  }

  @Test
  void reversedRangesStartingAtOrAfterTheLastRowAreDropped() {
    ReadRowsRequest r = request(RowSet.newBuilder()
        .addRowRanges(range().setStartKeyClosed(utf8("f")).setEndKeyOpen(utf8("m")))
        .addRowRanges(range().setStartKeyOpen(utf8("f")))
        .addRowRanges(range().setStartKeyClosed(utf8("a")).setEndKeyOpen(utf8("b"))).build(), 0, true);
    assertEquals(rows(range().setStartKeyClosed(utf8("a")).setEndKeyOpen(utf8("b"))),
        ScanResume.after(r, utf8("f"), 1).getRows());
  }

  @Test
  void theLimitShrinksByTheRowsDelivered() {
    assertEquals(6, ScanResume.after(request(RowSet.getDefaultInstance(), 10, false), utf8("d"), 4).getRowsLimit());
    assertNull(ScanResume.after(request(RowSet.getDefaultInstance(), 10, false), utf8("d"), 10));
    assertEquals(0, ScanResume.after(request(RowSet.getDefaultInstance(), 0, false), utf8("d"), 4).getRowsLimit(),
        "no limit stays no limit");
  }

  @Test
  void everythingButTheRowsIsKept() {
    ReadRowsRequest r = request(RowSet.getDefaultInstance(), 9, true).toBuilder()
        .setFilter(Filter.label("x").toProto()).build();
    ReadRowsRequest resumed = ScanResume.after(r, utf8("m"), 2);
    assertEquals(r.toBuilder().clearRows().setRowsLimit(7).build(), resumed.toBuilder().clearRows().build());
  }

  @Test
  void theResumedRequestReadsExactlyTheRowsNotYetDelivered() {
    long seed = Fixtures.seed(ScanResumeTest.class);
    Random random = new Random(seed);
    for (int round = 0; round < 2_000; round++) {
      List<ByteString> universe = universe(random);
      ReadRowsRequest original = request(randomRowSet(random, universe), random.nextInt(3) == 0
          ? 1 + random.nextInt(8) : 0, random.nextBoolean());
      List<ByteString> all = read(original, universe);
      for (int delivered = 1; delivered <= all.size(); delivered++) {
        ReadRowsRequest resumed = ScanResume.after(original, all.get(delivered - 1), delivered);
        List<ByteString> left = all.subList(delivered, all.size());
        String context = "seed " + seed + ", round " + round + ": " + original.getRows() + " limit "
            + original.getRowsLimit() + (original.getReversed() ? " reversed" : "") + ", " + delivered
            + " delivered";
        if (resumed == null) {
          assertTrue(left.isEmpty(), context + ": resume gave up with rows left " + left);
        } else {
          assertEquals(left, read(resumed, universe), context + ": resumed as " + resumed.getRows());
        }
      }
    }
  }

  /** The rows of {@code universe} that {@code r} reads, in its order and under its limit. */
  private static List<ByteString> read(ReadRowsRequest r, List<ByteString> universe) {
    List<ByteString> out = new ArrayList<>();
    for (ByteString k : universe) {
      if (contains(r.getRows(), k)) {
        out.add(k);
      }
    }
    if (r.getReversed()) {
      Collections.reverse(out);
    }
    return r.getRowsLimit() > 0 && out.size() > r.getRowsLimit() ? out.subList(0, (int) r.getRowsLimit()) : out;
  }

  private static boolean contains(RowSet s, ByteString k) {
    if (s.getRowKeysCount() == 0 && s.getRowRangesCount() == 0) {
      return true;
    }
    return s.getRowKeysList().contains(k) || s.getRowRangesList().stream().anyMatch(r -> contains(r, k));
  }

  private static boolean contains(RowRange r, ByteString k) {
    boolean afterStart = switch (r.getStartKeyCase()) {
      case START_KEY_CLOSED -> Bytes.compare(k, r.getStartKeyClosed()) >= 0;
      case START_KEY_OPEN -> Bytes.compare(k, r.getStartKeyOpen()) > 0;
      case STARTKEY_NOT_SET -> true;
    };
    boolean beforeEnd = switch (r.getEndKeyCase()) {
      case END_KEY_OPEN -> r.getEndKeyOpen().isEmpty() || Bytes.compare(k, r.getEndKeyOpen()) < 0;
      case END_KEY_CLOSED -> Bytes.compare(k, r.getEndKeyClosed()) <= 0;
      case ENDKEY_NOT_SET -> true;
    };
    return afterStart && beforeEnd;
  }

  /** Up to 40 distinct keys of 1 to 3 bytes from {00, 'a', 'b', 'c', ff}, sorted as unsigned bytes. */
  private static List<ByteString> universe(Random random) {
    TreeSet<ByteString> keys = new TreeSet<>(ByteString.unsignedLexicographicalComparator());
    int n = 1 + random.nextInt(40);
    for (int i = 0; i < n; i++) {
      keys.add(randomKey(random));
    }
    return new ArrayList<>(keys);
  }

  private static ByteString randomKey(Random random) {
    int[] alphabet = {0x00, 'a', 'b', 'c', 0xff};
    int[] b = new int[1 + random.nextInt(3)];
    for (int i = 0; i < b.length; i++) {
      b[i] = alphabet[random.nextInt(alphabet.length)];
    }
    return Fixtures.bytes(b);
  }

  /** Keys and ranges with every kind of bound, from the universe or not; sometimes none (the whole table). */
  private static RowSet randomRowSet(Random random, List<ByteString> universe) {
    RowSet.Builder s = RowSet.newBuilder();
    int keys = random.nextInt(4);
    for (int i = 0; i < keys; i++) {
      s.addRowKeys(pick(random, universe));
    }
    int ranges = random.nextInt(4);
    for (int i = 0; i < ranges; i++) {
      RowRange.Builder r = range();
      switch (random.nextInt(3)) {
        case 0 -> r.setStartKeyClosed(pick(random, universe));
        case 1 -> r.setStartKeyOpen(pick(random, universe));
        default -> { }
      }
      switch (random.nextInt(4)) {
        case 0 -> r.setEndKeyOpen(pick(random, universe));
        case 1 -> r.setEndKeyClosed(pick(random, universe));
        case 2 -> r.setEndKeyOpen(ByteString.EMPTY);
        default -> { }
      }
      s.addRowRanges(r);
    }
    return s.build();
  }

  private static ByteString pick(Random random, List<ByteString> universe) {
    return random.nextInt(4) == 0 ? randomKey(random) : universe.get(random.nextInt(universe.size()));
  }

  private static RowRange resumedRange(RowRange.Builder r, String last, boolean reversed) {
    ReadRowsRequest resumed = ScanResume.after(request(rows(r), 0, reversed), utf8(last), 1);
    assertEquals(0, resumed.getRows().getRowKeysCount());
    assertEquals(1, resumed.getRows().getRowRangesCount(), "resumed as " + resumed.getRows());
    return resumed.getRows().getRowRanges(0);
  }

  private static RowRange.Builder range() {
    return RowRange.newBuilder();
  }

  private static RowSet rows(RowRange.Builder r) {
    return RowSet.newBuilder().addRowRanges(r).build();
  }

  private static ReadRowsRequest request(RowSet rows, long limit, boolean reversed) {
    return ReadRowsRequest.newBuilder().setTableName(TABLE).setRows(rows).setRowsLimit(limit).setReversed(reversed)
        .build();
  }
}
