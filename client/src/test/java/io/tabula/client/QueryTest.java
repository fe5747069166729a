package io.tabula.client;

import static io.tabula.client.Fixtures.assertRefused;
import static io.tabula.client.Fixtures.bytes;
import static io.tabula.client.Fixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a query compiles to a ReadRowsRequest: its row set, its filter chain, limit and direction. */
class QueryTest {
  private static final String TABLE = "projects/p/instances/i/tables/t";

  @Test
  void rowSetUnitesKeysRangesAndPrefixesInTheOrderGiven() {
    Query q = Query.table("t").rowKeys("k1", "k0").range("a", "c").prefix("p/").rowKey(bytes(0, 0xff))
        .range("x", "");
    RowSet expected = RowSet.newBuilder()
        .addRowKeys(utf8("k1")).addRowKeys(utf8("k0")).addRowKeys(bytes(0, 0xff))
        .addRowRanges(closedOpen(utf8("a"), utf8("c")))
        .addRowRanges(closedOpen(utf8("p/"), utf8("p0")))
        .addRowRanges(closedOpen(utf8("x"), ByteString.EMPTY))
        .build();
    assertEquals(expected, q.rowSet());
    assertEquals(expected, q.toRequest(TABLE).getRows());
  }

  @Test
  void noRowsGivenMeansEveryRow() {
    ReadRowsRequest r = Query.table("t").toRequest(TABLE);
    assertEquals(RowSet.getDefaultInstance(), r.getRows());
    assertEquals(TABLE, r.getTableName());
    assertEquals(0, r.getRowsLimit());
    assertFalse(r.getReversed());
    assertFalse(r.hasFilter(), "no cell options: no filter at all");
    assertNull(Query.table("t").compiledFilter());
  }

  @Test
  void prefixEndIncrementsTheLastByteBelow0xff() {
    assertEquals(closedOpen(bytes('a', 'b'), bytes('a', 'c')), onlyRange(Query.table("t").prefix("ab")));
    assertEquals(closedOpen(bytes('a', 0xfe), bytes('a', 0xff)), onlyRange(Query.table("t").prefix(bytes('a', 0xfe))));
    assertEquals(closedOpen(bytes('a', 0xff), bytes('b')), onlyRange(Query.table("t").prefix(bytes('a', 0xff))));
    assertEquals(closedOpen(bytes('a', 0x7f, 0xff, 0xff), bytes('a', 0x80)),
        onlyRange(Query.table("t").prefix(bytes('a', 0x7f, 0xff, 0xff))), "0x7f + 1 is 0x80, unsigned");
    assertEquals(closedOpen(bytes(0xff, 0xff), ByteString.EMPTY), onlyRange(Query.table("t").prefix(bytes(0xff, 0xff))),
        "a prefix of only 0xff bytes reaches to the end of the table");
  }

  @Test
  void filterChainIsFamiliesQualifierTimestampsExtraThenVersions() {
    Filter extra = Filter.label("x");
    // Set in a scrambled order on purpose: the compiled order must not depend on it.
    Query q = Query.table("t").versions(2).filter(extra).timeRange(10, 20).qualifierRegex("q.*")
        .families("a", "b").column("c", "d");
    Filter expected = Filter.chain(
        Filter.interleave(Filter.familyRegex("a|b"), Filter.column("c", "d")),
        Filter.qualifierRegex("q.*"),
        Filter.timestamps(10, 20),
        extra,
        Filter.latest(2));
    assertEquals(expected, q.compiledFilter());
    assertEquals(expected.toProto(), q.toRequest(TABLE).getFilter());

    RowFilter.Chain chain = q.compiledFilter().toProto().getChain();
    assertEquals(List.of(RowFilter.FilterCase.INTERLEAVE, RowFilter.FilterCase.COLUMN_QUALIFIER_REGEX_FILTER,
        RowFilter.FilterCase.TIMESTAMP_RANGE_FILTER, RowFilter.FilterCase.APPLY_LABEL_TRANSFORMER,
        RowFilter.FilterCase.CELLS_PER_COLUMN_LIMIT_FILTER),
        chain.getFiltersList().stream().map(RowFilter::getFilterCase).toList());
  }

  @Test
  void familiesAndColumnsUniteWithoutPassingACellTwice() {
    // An interleave passes a cell once per branch that passes it: no family may be in two branches.
    assertEquals(Filter.interleave(Filter.family("f"), Filter.chain(Filter.family("g"),
        Filter.of(RowFilter.newBuilder().setColumnQualifierRegexFilter(utf8("x|y\\.z")).build()))),
        Query.table("t").column("f", "a").families("f").column("f", "b").column("g", "x").column("g", "y.z")
            .column("g", "x").families("f").compiledFilter());
    assertEquals(Filter.family("f"), Query.table("t").column("f", "a").families("f").compiledFilter(),
        "a column of a family asked for whole adds nothing");
    assertEquals(Filter.familyRegex("f|g\\-1"), Query.table("t").families("f", "g-1", "f").compiledFilter());
  }

  @Test
  void aSingleCellOptionIsNotWrapped() {
    assertEquals(Filter.latest(1), Query.table("t").versions(1).compiledFilter());
    assertEquals(Filter.family("f"), Query.table("t").families("f").compiledFilter());
    assertEquals(Filter.chain(Filter.family("f"), Filter.latest(3)),
        Query.table("t").families("f").versions(3).compiledFilter());
    RowFilter column = Query.table("t").column("f", "q").compiledFilter().toProto();
    assertEquals("f", column.getChain().getFilters(0).getFamilyNameRegexFilter());
    assertEquals(utf8("q"), column.getChain().getFilters(1).getColumnQualifierRegexFilter());
  }

  @Test
  void laterSettingsReplaceEarlierOnes() {
    Query q = Query.table("t").qualifierRegex("a").qualifierRegex("b").timeRange(1, 2).timeRange(3, 0)
        .versions(5).versions(1).limit(7).limit(3).filter(Filter.pass()).filter(Filter.stripValue());
    assertEquals(Filter.chain(Filter.qualifierRegex("b"), Filter.timestamps(3, 0), Filter.stripValue(),
        Filter.latest(1)), q.compiledFilter());
    assertEquals(3, q.toRequest(TABLE).getRowsLimit());
  }

  @Test
  void limitAndReversedReachTheRequest() {
    ReadRowsRequest r = Query.table("t").prefix("p").limit(42).reversed().toRequest(TABLE);
    assertEquals(42, r.getRowsLimit());
    assertTrue(r.getReversed());
    Query q = Query.table("t").limit(5).reversed();
    assertEquals(5, q.limit());
    assertTrue(q.isReversed());
    assertEquals("t", q.tableId());
  }

  @Test
  void refusesWhatCannotBeRead() {
    assertRefused("table", () -> Query.table(""));
    assertRefused("row key", () -> Query.table("t").rowKey(""));
    assertRefused("prefix", () -> Query.table("t").prefix(""));
    assertRefused("range [b, a) is empty", () -> Query.table("t").range("b", "a"));
    assertRefused("range [a, a) is empty", () -> Query.table("t").range("a", "a"));
    assertRefused("time range [5, 5)", () -> Query.table("t").timeRange(5, 5));
    assertRefused("time range [-1, 0)", () -> Query.table("t").timeRange(-1, 0));
    assertRefused("versions", () -> Query.table("t").versions(0));
    assertRefused("limit", () -> Query.table("t").limit(0));
    assertRefused("family", () -> Query.table("t").families(""));
    // A range from the table's start is fine.
    assertEquals(closedOpen(ByteString.EMPTY, utf8("m")), onlyRange(Query.table("t").range("", "m")));
  }

  private static RowRange onlyRange(Query q) {
    RowSet s = q.rowSet();
    assertEquals(0, s.getRowKeysCount());
    assertEquals(1, s.getRowRangesCount());
    return s.getRowRanges(0);
  }

  private static RowRange closedOpen(ByteString start, ByteString end) {
    return RowRange.newBuilder().setStartKeyClosed(start).setEndKeyOpen(end).build();
  }

}
