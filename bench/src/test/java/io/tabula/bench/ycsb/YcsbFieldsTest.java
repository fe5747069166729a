package io.tabula.bench.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.ByteString;
import io.tabula.client.Cell;
import io.tabula.client.Filter;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import site.ycsb.ByteIterator;
import site.ycsb.StringByteIterator;

/** The mapping of YCSB records onto Tabula rows, without a node. */
class YcsbFieldsTest {
  private static ByteString utf8(String s) {
    return ByteString.copyFromUtf8(s);
  }

  @Test
  void everyFieldBecomesOneCellOfTheFamilyAtTheServersTime() {
    Map<String, ByteIterator> values = new LinkedHashMap<>();
    values.put("field0", new StringByteIterator("alpha"));
    values.put("field1", new StringByteIterator("beta"));
    RowMutation m = YcsbFields.mutation("user42", "cf", values);

    assertEquals(utf8("user42"), m.key());
    List<Mutation> ms = m.toProto();
    assertEquals(2, ms.size());
    assertEquals("cf", ms.get(0).getSetCell().getFamilyName());
    assertEquals(utf8("field0"), ms.get(0).getSetCell().getColumnQualifier());
    assertEquals(utf8("alpha"), ms.get(0).getSetCell().getValue());
    assertEquals(-1, ms.get(0).getSetCell().getTimestampMicros(), "server time");
    assertEquals(utf8("field1"), ms.get(1).getSetCell().getColumnQualifier());
    assertEquals(utf8("beta"), ms.get(1).getSetCell().getValue());
    assertFalse(m.isIdempotent());
  }

  @Test
  void allFieldsReadTheWholeFamilyNewestVersionOnly() {
    assertEquals(Filter.chain(Filter.family("cf"), Filter.latest(1)), YcsbFields.filter("cf", null));
  }

  @Test
  void namedFieldsReadOnlyTheirColumns() {
    Set<String> fields = new LinkedHashSet<>(List.of("field3", "field7"));
    Filter f = YcsbFields.filter("cf", fields);
    assertEquals(Filter.chain(Filter.interleave(Filter.column("cf", "field3"), Filter.column("cf", "field7")),
        Filter.latest(1)), f);
    RowFilter.Chain chain = f.toProto().getChain();
    assertEquals(2, chain.getFilters(0).getInterleave().getFiltersCount());
  }

  @Test
  void scanStartsAtTheKeyWithARowLimit() {
    ReadRowsRequest req = YcsbFields.scan("usertable", "cf", "user5", 17, null).toRequest("t");
    assertEquals(17, req.getRowsLimit());
    assertEquals(utf8("user5"), req.getRows().getRowRanges(0).getStartKeyClosed());
    assertEquals(ByteString.EMPTY, req.getRows().getRowRanges(0).getEndKeyOpen());
  }

  @Test
  void cellsMapBackToFieldsNewestFirstAndOtherFamiliesAreIgnored() {
    Row row = new Row(utf8("user42"), List.of(
        new Cell("cf", utf8("field0"), 2_000, utf8("new"), List.of()),
        new Cell("cf", utf8("field0"), 1_000, utf8("old"), List.of()),
        new Cell("cf", utf8("field1"), 1_000, utf8("beta"), List.of()),
        new Cell("other", utf8("field2"), 1_000, utf8("x"), List.of())));
    Map<String, ByteIterator> out = new HashMap<>();
    YcsbFields.toResult(row, "cf", out);

    assertEquals(Set.of("field0", "field1"), out.keySet());
    assertEquals("new", new String(out.get("field0").toArray(), StandardCharsets.UTF_8));
    assertEquals("beta", new String(out.get("field1").toArray(), StandardCharsets.UTF_8));
  }
}
