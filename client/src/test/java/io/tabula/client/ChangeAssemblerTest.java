package io.tabula.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadChangeStreamResponse.DataChange;
import com.google.bigtable.v2.ReadChangeStreamResponse.MutationChunk;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.Value;
import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import io.grpc.Status;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A change put back together from its messages as Cloud Bigtable lays them out: continuation
 * messages, values in pieces, and each way a stream out of order is refused; and the coverage
 * of a merged partition by its parents' tokens.
 */
class ChangeAssemblerTest {
  private static final Timestamp COMMIT = Timestamp.newBuilder().setSeconds(1_700_000_000).setNanos(123_000).build();

  private static MutationChunk whole(Mutation m) {
    return MutationChunk.newBuilder().setMutation(m).build();
  }

  private static MutationChunk piece(String value, int offset, int size, boolean last) {
    return MutationChunk.newBuilder().setChunkInfo(MutationChunk.ChunkInfo.newBuilder().setChunkedValueSize(size)
        .setChunkedValueOffset(offset).setLastChunk(last)).setMutation(set("big", value)).build();
  }

  private static Mutation set(String qualifier, String value) {
    return Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName("f")
        .setColumnQualifier(ByteString.copyFromUtf8(qualifier)).setTimestampMicros(5_000)
        .setValue(ByteString.copyFromUtf8(value))).build();
  }

  private static DataChange.Builder first(String row) {
    return DataChange.newBuilder().setType(DataChange.Type.USER).setRowKey(ByteString.copyFromUtf8(row))
        .setCommitTimestamp(COMMIT);
  }

  private static DataChange.Builder next() {
    return DataChange.newBuilder().setType(DataChange.Type.CONTINUATION);
  }

  @Test
  void aChangeAcrossMessagesWithAValueInPiecesComesWhole() {
    ChangeAssembler a = new ChangeAssembler();
    assertNull(a.accept(first("r").addChunks(whole(set("small", "s"))).addChunks(piece("abc", 0, 8, false))
        .build()));
    assertTrue(a.inChange());
    assertNull(a.accept(next().addChunks(piece("def", 3, 8, false)).build()));
    Change c = a.accept(next().addChunks(piece("gh", 6, 8, true)).addChunks(whole(Mutation.newBuilder()
        .setDeleteFromFamily(Mutation.DeleteFromFamily.newBuilder().setFamilyName("g")).build()))
        .setDone(true).setToken("t1").build());
    assertFalse(a.inChange());
    assertEquals(ByteString.copyFromUtf8("r"), c.key());
    assertEquals(Instant.ofEpochSecond(1_700_000_000, 123_000), c.commitTime());
    assertEquals(1_700_000_000_000_123L, c.commitMicros());
    assertEquals("t1", c.token());
    assertEquals(List.of(new Change.SetCell("f", ByteString.copyFromUtf8("small"), 5_000, ByteString.copyFromUtf8("s")),
        new Change.SetCell("f", ByteString.copyFromUtf8("big"), 5_000, ByteString.copyFromUtf8("abcdefgh")),
        new Change.DeleteFamily("g")), c.mutations());
  }

  @Test
  void eachMutationKindIsCarried() {
    Mutation deleteColumn = Mutation.newBuilder().setDeleteFromColumn(Mutation.DeleteFromColumn.newBuilder()
        .setFamilyName("f").setColumnQualifier(ByteString.copyFromUtf8("q")).setTimeRange(
            com.google.bigtable.v2.TimestampRange.newBuilder().setStartTimestampMicros(10).setEndTimestampMicros(20)))
        .build();
    Mutation merge = Mutation.newBuilder().setMergeToCell(Mutation.MergeToCell.newBuilder().setFamilyName("sum")
        .setColumnQualifier(Value.newBuilder().setRawValue(ByteString.copyFromUtf8("hits")))
        .setTimestamp(Value.newBuilder().setRawTimestampMicros(3_000))
        .setInput(Value.newBuilder().setRawValue(ByteString.copyFrom(new byte[] {0, 0, 0, 0, 0, 0, 0, 7})))).build();
    assertEquals(new Change.DeleteCells("f", ByteString.copyFromUtf8("q"), 10, 20), ChangeAssembler.of(deleteColumn));
    assertEquals(new Change.MergeToCell("sum", ByteString.copyFromUtf8("hits"), 3_000,
        ByteString.copyFrom(new byte[] {0, 0, 0, 0, 0, 0, 0, 7})), ChangeAssembler.of(merge));
  }

  @Test
  void aStreamOutOfOrderIsRefusedAsTheNodesMistake() {
    assertBroken(new ChangeAssembler(), next().setDone(true).build());
    ChangeAssembler begun = new ChangeAssembler();
    begun.accept(first("r").build());
    assertBroken(begun, first("s").build());
    ChangeAssembler gap = new ChangeAssembler();
    gap.accept(first("r").addChunks(piece("abc", 0, 6, false)).build());
    assertBroken(gap, next().addChunks(piece("def", 4, 6, true)).build());
    ChangeAssembler short_ = new ChangeAssembler();
    short_.accept(first("r").addChunks(piece("abc", 0, 6, false)).build());
    assertBroken(short_, next().addChunks(piece("de", 3, 6, true)).build());
    ChangeAssembler unfinished = new ChangeAssembler();
    unfinished.accept(first("r").addChunks(piece("abc", 0, 6, false)).build());
    assertBroken(unfinished, next().setDone(true).build());

    ChangeAssembler reset = new ChangeAssembler();
    reset.accept(first("r").addChunks(piece("abc", 0, 6, false)).build());
    reset.reset();
    assertEquals("t", reset.accept(first("s").setDone(true).setToken("t").build()).token(),
        "after a reset, a new change begins");
  }

  private static void assertBroken(ChangeAssembler a, DataChange d) {
    TabulaException e = assertThrows(TabulaException.class, () -> a.accept(d));
    assertEquals(Status.Code.INTERNAL, e.code());
  }

  @Test
  void aMergedPartitionIsCoveredOnlyByContiguousTokensFromItsStartToItsEnd() {
    ChangeStream.Range all = range("", "");
    ChangeStream.Range left = range("", "m");
    ChangeStream.Range right = range("m", "");
    assertTrue(all.coveredBy(List.of(right, left)));
    assertFalse(all.coveredBy(List.of(left)));
    assertFalse(all.coveredBy(List.of(right)));
    assertFalse(all.coveredBy(List.of(left, range("n", ""))));
    assertTrue(range("b", "x").coveredBy(List.of(range("m", "x"), range("b", "m"))));
    assertFalse(range("b", "x").coveredBy(List.of(range("b", "m"), range("m", ""))));
    assertEquals(range("b\0", "x\0"), ChangeStream.Range.of(RowRange.newBuilder()
        .setStartKeyOpen(ByteString.copyFromUtf8("b")).setEndKeyClosed(ByteString.copyFromUtf8("x")).build()));
  }

  private static ChangeStream.Range range(String start, String end) {
    return new ChangeStream.Range(ByteString.copyFromUtf8(start), ByteString.copyFromUtf8(end));
  }
}
