package io.tabula.client;

import static io.tabula.client.Fixtures.assertRefused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.Mutation;
import com.google.protobuf.ByteString;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The row mutation builder: order, idempotence, and the arguments it refuses. */
class RowMutationTest {
  @Test
  void keepsTheOrderTheMutationsWereAddedIn() {
    RowMutation m = RowMutation.create("row")
        .setCell("f", "a", 10, "v1")
        .deleteCells("f", "b", 5, 9)
        .deleteFamily("g")
        .deleteRow()
        .setCell("f", "c", 20, 7L)
        .deleteCells("f", "d");

    List<Mutation> p = m.toProto();
    assertEquals(6, m.size());
    assertEquals(List.of(Mutation.MutationCase.SET_CELL, Mutation.MutationCase.DELETE_FROM_COLUMN,
        Mutation.MutationCase.DELETE_FROM_FAMILY, Mutation.MutationCase.DELETE_FROM_ROW,
        Mutation.MutationCase.SET_CELL, Mutation.MutationCase.DELETE_FROM_COLUMN),
        p.stream().map(Mutation::getMutationCase).toList());

    Mutation.SetCell first = p.get(0).getSetCell();
    assertEquals("f", first.getFamilyName());
    assertEquals("a", first.getColumnQualifier().toStringUtf8());
    assertEquals(10, first.getTimestampMicros());
    assertEquals("v1", first.getValue().toStringUtf8());

    Mutation.DeleteFromColumn range = p.get(1).getDeleteFromColumn();
    assertEquals("b", range.getColumnQualifier().toStringUtf8());
    assertEquals(5, range.getTimeRange().getStartTimestampMicros());
    assertEquals(9, range.getTimeRange().getEndTimestampMicros());

    assertEquals("g", p.get(2).getDeleteFromFamily().getFamilyName());
    assertEquals(ByteString.copyFrom(new byte[] {0, 0, 0, 0, 0, 0, 0, 7}), p.get(4).getSetCell().getValue(),
        "a long value is written as 8 big-endian bytes");

    Mutation.DeleteFromColumn all = p.get(5).getDeleteFromColumn();
    assertEquals(0, all.getTimeRange().getStartTimestampMicros());
    assertEquals(0, all.getTimeRange().getEndTimestampMicros(), "every version: no upper bound");
    assertEquals(ByteString.copyFromUtf8("row"), m.key());
  }

  @Test
  void theProtoListIsACopy() {
    RowMutation m = RowMutation.create("row").setCell("f", "a", 1, "v");
    List<Mutation> before = m.toProto();
    m.deleteRow();
    assertEquals(1, before.size());
    assertThrows(UnsupportedOperationException.class, () -> before.add(Mutation.getDefaultInstance()));
  }

  @Test
  void aCellAtTheServersTimeMakesTheMutationNonIdempotent() {
    RowMutation m = RowMutation.create("row").setCell("f", "a", 10, "v");
    assertTrue(m.isIdempotent());
    m.setCell("f", "b", "now");
    assertFalse(m.isIdempotent());
    assertEquals(RowMutation.SERVER_TIME, m.toProto().get(1).getSetCell().getTimestampMicros());
    m.setCell("f", "c", 11, "v");
    assertFalse(m.isIdempotent(), "a later explicit timestamp does not make it idempotent again");

    assertFalse(RowMutation.create("r").setCell("f", ByteString.copyFromUtf8("q"), ByteString.EMPTY).isIdempotent());
    assertFalse(RowMutation.create("r").setCell("f", ByteString.copyFromUtf8("q"), -1, ByteString.EMPTY)
        .isIdempotent());
  }

  @Test
  void explicitTimestampsAndDeletesStayIdempotent() {
    RowMutation m = RowMutation.create(new byte[] {1, 2})
        .setCell("f", "a", 0, "zero is a timestamp, not the server's time")
        .setCell("f", "b", Long.MAX_VALUE, 1L)
        .deleteCells("f", "c", 0, 0)
        .deleteCells("f", "d", 3, 4)
        .deleteFamily("f")
        .deleteRow();
    assertTrue(m.isIdempotent());
    assertTrue(RowMutation.create("empty").isIdempotent());
  }

  @Test
  void refusesAnEmptyRowKey() {
    assertRefused("row key", () -> RowMutation.create(""));
    assertRefused("row key", () -> RowMutation.create(new byte[0]));
    assertRefused("row key", () -> RowMutation.create(ByteString.EMPTY));
  }

  @Test
  void refusesAnEmptyFamily() {
    RowMutation m = RowMutation.create("row");
    assertRefused("family", () -> m.setCell("", "q", 1, "v"));
    assertRefused("family", () -> m.setCell(null, "q", 1, "v"));
    assertRefused("family", () -> m.deleteCells("", "q"));
    assertRefused("family", () -> m.deleteFamily(""));
    assertEquals(0, m.size());
  }

  @Test
  void refusesNegativeTimestamps() {
    RowMutation m = RowMutation.create("row");
    assertRefused("timestamp must be >= 0", () -> m.setCell("f", "q", -2, "v"));
    assertRefused("must not be negative", () -> m.deleteCells("f", "q", -1, 5));
    assertRefused("must not be negative", () -> m.deleteCells("f", "q", 0, -5));
    assertEquals(0, m.size());
  }

  @Test
  void refusesAnEmptyTimeRange() {
    RowMutation m = RowMutation.create("row");
    assertRefused("[5, 5) is empty", () -> m.deleteCells("f", "q", 5, 5));
    assertRefused("[9, 3) is empty", () -> m.deleteCells("f", "q", 9, 3));
    m.deleteCells("f", "q", 9, 0);
    assertEquals(1, m.size(), "an end of 0 means no upper bound, not an empty range");
  }

  @Test
  void aRefusedCallLeavesTheMutationAsItWas() {
    RowMutation m = RowMutation.create("row").setCell("f", "a", 1, "v");
    assertRefused("family", () -> m.setCell("", "q", "at the server's time"));
    assertRefused("family", () -> m.setCell("", ByteString.copyFromUtf8("q"), ByteString.EMPTY));
    assertEquals(1, m.size());
    assertTrue(m.isIdempotent(), "a server-time cell that was refused must not count");
  }
}
