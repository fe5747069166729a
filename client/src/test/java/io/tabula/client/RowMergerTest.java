package io.tabula.client;

import static io.tabula.client.Fixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.ReadRowsResponse.CellChunk;
import com.google.protobuf.BytesValue;
import com.google.protobuf.StringValue;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Rows rebuilt from ReadRows cell chunks, and the streams that break the chunk grammar. */
class RowMergerTest {
  @Test
  void aRowIsCompleteOnlyAtItsCommit() {
    RowMerger m = new RowMerger(false);
    assertEquals(List.of(), m.accept(response(cell("r1", "f", "a", 3, "x"), cell(null, "g", "b", 2, "y"))));
    List<Row> rows = m.accept(response(commit(cell(null, null, null, 1, "z"))));
    m.finish();

    assertEquals(1, rows.size());
    Row r = rows.get(0);
    assertEquals("r1", r.keyUtf8());
    assertEquals(List.of(
        new Cell("f", utf8("a"), 3, utf8("x"), List.of()),
        new Cell("g", utf8("b"), 2, utf8("y"), List.of()),
        new Cell("g", utf8("b"), 1, utf8("z"), List.of())), r.cells(),
        "family and qualifier carry over from the chunk before until a chunk names new ones");
  }

  @Test
  void aQualifierAloneChangesOnlyTheQualifier() {
    RowMerger m = new RowMerger(false);
    List<Row> rows = m.accept(response(cell("r", "f", "a", 1, "x"), commit(cell(null, null, "b", 1, "y"))));
    assertEquals(List.of("f", "f"), rows.get(0).cells().stream().map(Cell::family).toList());
    assertEquals(List.of("a", "b"), rows.get(0).cells().stream().map(Cell::qualifierUtf8).toList());
  }

  @Test
  void manyRowsInOneResponseComeOutInOrder() {
    RowMerger m = new RowMerger(false);
    List<Row> rows = m.accept(response(commit(cell("a", "f", "q", 1, "1")), commit(cell("b", "f", "q", 1, "2")),
        commit(cell("c", "f", "q", 1, "3"))));
    assertEquals(List.of("a", "b", "c"), rows.stream().map(Row::keyUtf8).toList());
  }

  @Test
  void aValueSplitOverChunksAndResponsesIsJoined() {
    RowMerger m = new RowMerger(false);
    assertEquals(List.of(), m.accept(response(split(cell("r", "f", "q", 7, "ab"), 5))));
    assertEquals(List.of(), m.accept(response(split(cell(null, null, null, 0, "cd"), 5))));
    List<Row> rows = m.accept(response(commit(cell(null, null, null, 0, "e")), commit(cell("s", "f", "q", 1, "z"))));
    m.finish();
    assertEquals(2, rows.size());
    assertEquals(List.of(new Cell("f", utf8("q"), 7, utf8("abcde"), List.of())), rows.get(0).cells(),
        "the timestamp and column come from the first chunk of the value");
    assertEquals("z", rows.get(1).cells().get(0).valueUtf8());
  }

  @Test
  void resetRowDropsTheRowSoFarIncludingAHalfReadValue() {
    RowMerger m = new RowMerger(false);
    m.accept(response(cell("r", "f", "old", 1, "x"), split(cell(null, null, "half", 1, "ab"), 4)));
    m.accept(response(CellChunk.newBuilder().setResetRow(true).build()));
    List<Row> rows = m.accept(response(commit(cell("r", "g", "new", 2, "y"))));
    assertEquals(List.of(new Cell("g", utf8("new"), 2, utf8("y"), List.of())), rows.get(0).cells());
  }

  @Test
  void labelsStayWithTheirCell() {
    RowMerger m = new RowMerger(false);
    List<Row> rows = m.accept(response(
        cell("r", "f", "a", 1, "x").toBuilder().addLabels("one").addLabels("two").build(),
        commit(cell(null, null, "b", 1, "y"))));
    assertEquals(List.of("one", "two"), rows.get(0).cells().get(0).labels());
    assertEquals(List.of(), rows.get(0).cells().get(1).labels(), "labels do not carry over to the next cell");
  }

  @Test
  void rowsOutOfOrderAreRefused() {
    RowMerger forward = new RowMerger(false);
    forward.accept(response(commit(cell("b", "f", "q", 1, "x"))));
    assertMalformed("row a is out of order", () -> forward.accept(response(commit(cell("a", "f", "q", 1, "x")))));

    RowMerger again = new RowMerger(false);
    again.accept(response(commit(cell("b", "f", "q", 1, "x"))));
    assertMalformed("row b is out of order", () -> again.accept(response(commit(cell("b", "f", "q", 1, "x")))));

    RowMerger reversed = new RowMerger(true);
    assertEquals(2, reversed.accept(response(commit(cell("b", "f", "q", 1, "x")), commit(cell("a", "f", "q", 1, "x"))))
        .size());
    assertMalformed("row c is out of order", () -> reversed.accept(response(commit(cell("c", "f", "q", 1, "x")))));
  }

  @Test
  void keysCompareAsUnsignedBytes() {
    RowMerger m = new RowMerger(false);
    m.accept(response(commit(cell("b", "f", "q", 1, "x"))));
    CellChunk high = commit(cell(null, "f", "q", 1, "x")).toBuilder().setRowKey(Fixtures.bytes(0xff)).build();
    assertEquals(1, m.accept(response(high)).size(), "\\xff sorts after b");
  }

  @Test
  void aStreamEndingInsideARowFails() {
    RowMerger m = new RowMerger(false);
    m.accept(response(commit(cell("a", "f", "q", 1, "x")), cell("b", "f", "q", 1, "y")));
    assertMalformed("the stream ended inside row b", m::finish);

    RowMerger splitValue = new RowMerger(false);
    splitValue.accept(response(split(cell("c", "f", "q", 1, "y"), 10)));
    assertMalformed("the stream ended inside row c", splitValue::finish);
  }

  @Test
  void chunksThatBreakTheGrammarAreRefused() {
    assertMalformed("a row's first chunk has no row key", () -> new RowMerger(false)
        .accept(response(cell(null, "f", "q", 1, "x"))));
    assertMalformed("a chunk with a new family has no qualifier", () -> new RowMerger(false)
        .accept(response(cell("r", "f", null, 1, "x"))));
    assertMalformed("has no family or qualifier", () -> new RowMerger(false)
        .accept(response(cell("r", null, "q", 1, "x"))));
    assertMalformed("a new row key arrived before row r was committed", () -> new RowMerger(false)
        .accept(response(cell("r", "f", "q", 1, "x"), cell("s", "f", "q", 1, "x"))));
    assertMalformed("committed inside a split value", () -> new RowMerger(false)
        .accept(response(commit(split(cell("r", "f", "q", 1, "x"), 3)))));
    assertMalformed("reset_row", () -> new RowMerger(false)
        .accept(response(CellChunk.newBuilder().setResetRow(true).build())));
    assertMalformed("reset_row", () -> new RowMerger(false).accept(response(cell("r", "f", "q", 1, "x"),
        CellChunk.newBuilder().setResetRow(true).setValue(utf8("v")).build())));
  }

  private static void assertMalformed(String what, Executable call) {
    TabulaException e = assertThrows(TabulaException.class, call);
    assertEquals(Status.Code.INTERNAL, e.code());
    assertTrue(e.getMessage().contains(what), "message '" + e.getMessage() + "' should say '" + what + "'");
  }

  /** A chunk; null key, family or qualifier are left out (carried over from the chunk before). */
  private static CellChunk cell(String key, String family, String qualifier, long ts, String value) {
    CellChunk.Builder c = CellChunk.newBuilder().setTimestampMicros(ts).setValue(utf8(value));
    if (key != null) {
      c.setRowKey(utf8(key));
    }
    if (family != null) {
      c.setFamilyName(StringValue.of(family));
    }
    if (qualifier != null) {
      c.setQualifier(BytesValue.of(utf8(qualifier)));
    }
    return c.build();
  }

  private static CellChunk commit(CellChunk c) {
    return c.toBuilder().setCommitRow(true).build();
  }

  /** Marks {@code c} as a part of a value of {@code totalSize} bytes with more chunks to come. */
  private static CellChunk split(CellChunk c, int totalSize) {
    return c.toBuilder().setValueSize(totalSize).build();
  }

  private static ReadRowsResponse response(CellChunk... chunks) {
    return ReadRowsResponse.newBuilder().addAllChunks(new ArrayList<>(List.of(chunks))).build();
  }
}
