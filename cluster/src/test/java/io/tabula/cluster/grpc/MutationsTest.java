package io.tabula.cluster.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.TimestampRange;
import com.google.protobuf.ByteString;
import io.tabula.persistence.model.RowMutation;
import java.util.List;
import org.apache.pekko.grpc.GrpcServiceException;
import org.junit.jupiter.api.Test;

/**
 * Microsecond timestamps from a client that writes them: a cell's is truncated to its
 * millisecond, a delete's range keeps its meaning over millisecond cells (its bounds rounded
 * up, an end of 0 still no end); from any other client they are refused.
 */
class MutationsTest {
  private static final ByteString ROW = ByteString.copyFromUtf8("r");

  private static Mutation set(long ts) {
    return Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName("f")
        .setColumnQualifier(ByteString.copyFromUtf8("q")).setTimestampMicros(ts).setValue(ByteString.EMPTY)).build();
  }

  private static Mutation delete(long start, long end) {
    return Mutation.newBuilder().setDeleteFromColumn(Mutation.DeleteFromColumn.newBuilder().setFamilyName("f")
        .setColumnQualifier(ByteString.copyFromUtf8("q")).setTimeRange(TimestampRange.newBuilder()
            .setStartTimestampMicros(start).setEndTimestampMicros(end))).build();
  }

  private static io.tabula.persistence.model.Mutation one(Mutation m, boolean micros) {
    RowMutation rm = Mutations.rowMutation(ROW, List.of(m), micros);
    return rm.mutations().get(0);
  }

  @Test
  void aClientThatWritesMicrosecondsHasItsCellsTruncatedToTheMillisecond() {
    assertEquals(1000, ((io.tabula.persistence.model.Mutation.SetCell) one(set(1999), true)).timestamp());
    assertEquals(-1, ((io.tabula.persistence.model.Mutation.SetCell) one(set(-1), true)).timestamp());
    GrpcServiceException refused = assertThrows(GrpcServiceException.class, () -> one(set(1999), false));
    assertTrue(refused.getMessage().contains("millisecond granularity"), refused.getMessage());
  }

  @Test
  void aDeletesRangeKeepsItsMeaningOverMillisecondCells() {
    var small = (io.tabula.persistence.model.Mutation.DeleteFromColumn) one(delete(0, 500), true);
    assertEquals(0, small.startInclusive());
    assertEquals(1000, small.endExclusive(), "cells before 500 µs: the one at 0, not every version");
    var inner = (io.tabula.persistence.model.Mutation.DeleteFromColumn) one(delete(1500, 2500), true);
    assertEquals(2000, inner.startInclusive(), "the cell at 1000 is before 1500: kept");
    assertEquals(3000, inner.endExclusive(), "the cell at 2000 is before 2500: deleted");
    var open = (io.tabula.persistence.model.Mutation.DeleteFromColumn) one(delete(1500, 0), true);
    assertEquals(io.tabula.persistence.model.Mutation.DeleteFromColumn.ALL_VERSIONS_END, open.endExclusive());
  }
}
