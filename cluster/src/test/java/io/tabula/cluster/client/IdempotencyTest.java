package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.admin.v2.ColumnFamily;
import com.google.bigtable.admin.v2.CreateTableRequest;
import com.google.bigtable.admin.v2.Table;
import com.google.bigtable.admin.v2.Type;
import com.google.bigtable.v2.Idempotency;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowResponse;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.MutateRowsResponse;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowSet;
import com.google.bigtable.v2.Value;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code Idempotency} on MutateRow and MutateRows (docs/aggregates.md): an AddToCell sent
 * again with the same token, in later calls, in one batch, or after the node is stopped and
 * started again on its root, counts once; a new token counts again; a first attempt older than
 * the window and a token of the wrong size are refused naming the field. Over grpc-java on
 * 127.0.0.1 (the official Java client sends no token of its own).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class IdempotencyTest {
  private static final String INSTANCE = "projects/p/instances/i";
  private static final String TABLE = INSTANCE + "/tables/counters";
  private static final MethodDescriptor<MutateRowRequest, MutateRowResponse> MUTATE_ROW = method(
      "google.bigtable.v2.Bigtable", MethodDescriptor.MethodType.UNARY, "MutateRow",
      MutateRowRequest.getDefaultInstance(), MutateRowResponse.getDefaultInstance());
  private static final MethodDescriptor<MutateRowsRequest, MutateRowsResponse> MUTATE_ROWS = method(
      "google.bigtable.v2.Bigtable", MethodDescriptor.MethodType.SERVER_STREAMING, "MutateRows",
      MutateRowsRequest.getDefaultInstance(), MutateRowsResponse.getDefaultInstance());
  private static final MethodDescriptor<ReadRowsRequest, ReadRowsResponse> READ_ROWS = method(
      "google.bigtable.v2.Bigtable", MethodDescriptor.MethodType.SERVER_STREAMING, "ReadRows",
      ReadRowsRequest.getDefaultInstance(), ReadRowsResponse.getDefaultInstance());
  private static final MethodDescriptor<CreateTableRequest, Table> CREATE_TABLE = method(
      "google.bigtable.admin.v2.BigtableTableAdmin", MethodDescriptor.MethodType.UNARY, "CreateTable",
      CreateTableRequest.getDefaultInstance(), Table.getDefaultInstance());

  @TempDir
  Path dir;

  private static <Q extends Message, R extends Message> MethodDescriptor<Q, R> method(String service,
      MethodDescriptor.MethodType type, String name, Q request, R response) {
    return MethodDescriptor.<Q, R>newBuilder().setType(type)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(service, name))
        .setRequestMarshaller(ProtoUtils.marshaller(request)).setResponseMarshaller(ProtoUtils.marshaller(response))
        .build();
  }

  private static Mutation add(long n) {
    return Mutation.newBuilder().setAddToCell(Mutation.AddToCell.newBuilder().setFamilyName("sum")
        .setColumnQualifier(Value.newBuilder().setRawValue(ByteString.copyFromUtf8("q")))
        .setTimestamp(Value.newBuilder().setRawTimestampMicros(1000)).setInput(Value.newBuilder().setIntValue(n)))
        .build();
  }

  private static Idempotency token(String t, long startMillis) {
    Idempotency.Builder b = Idempotency.newBuilder().setToken(ByteString.copyFromUtf8(t));
    if (startMillis != 0) {
      b.setStartTime(Timestamp.newBuilder().setSeconds(startMillis / 1000));
    }
    return b.build();
  }

  private static MutateRowRequest addOnce(long n, Idempotency idempotency) {
    return MutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFromUtf8("r"))
        .addMutations(add(n)).setIdempotency(idempotency).build();
  }

  private static long sum(ManagedChannel channel) {
    Iterator<ReadRowsResponse> it = ClientCalls.blockingServerStreamingCall(channel, READ_ROWS,
        CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), ReadRowsRequest.newBuilder().setTableName(TABLE)
            .setRows(RowSet.newBuilder().addRowKeys(ByteString.copyFromUtf8("r"))).build());
    List<ByteString> values = new ArrayList<>();
    it.forEachRemaining(r -> r.getChunksList().forEach(c -> values.add(c.getValue())));
    assertEquals(1, values.size(), "one cell: " + values);
    return ByteBuffer.wrap(values.get(0).toByteArray()).getLong();
  }

  private static <Q, R> R call(ManagedChannel channel, MethodDescriptor<Q, R> m, Q request) {
    return ClientCalls.blockingUnaryCall(channel, m, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
        request);
  }

  private static List<Integer> codes(ManagedChannel channel, MutateRowsRequest request) {
    List<Integer> out = new ArrayList<>();
    ClientCalls.blockingServerStreamingCall(channel, MUTATE_ROWS,
        CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), request)
        .forEachRemaining(r -> r.getEntriesList().forEach(e -> out.add(e.getStatus().getCode())));
    return out;
  }

  @Test
  void aRetriedAddWithItsTokenCountsOnceAlsoAfterARestart() throws Exception {
    InJvmNode node = InJvmNode.start(dir);
    ManagedChannel channel = NettyChannelBuilder.forTarget(InJvmNode.endpoint(node.node)).usePlaintext().build();
    try {
      call(channel, CREATE_TABLE, CreateTableRequest.newBuilder().setParent(INSTANCE).setTableId("counters")
          .setTable(Table.newBuilder().putColumnFamilies("sum", ColumnFamily.newBuilder().setValueType(Type.newBuilder()
              .setAggregateType(Type.Aggregate.newBuilder().setInputType(Type.newBuilder().setInt64Type(
                  Type.Int64.getDefaultInstance())).setSum(Type.Aggregate.Sum.getDefaultInstance()))).build()))
          .build());
      long now = System.currentTimeMillis();
      for (int i = 0; i < 3; i++) {
        call(channel, MUTATE_ROW, addOnce(5, token("first-attempt", now)));
      }
      assertEquals(5, sum(channel), "one add of three sent with one token");
      call(channel, MUTATE_ROW, addOnce(5, token("second-attempt", 0)));
      assertEquals(10, sum(channel), "a new token counts");
      MutateRowsRequest.Entry twice = MutateRowsRequest.Entry.newBuilder().setRowKey(ByteString.copyFromUtf8("r"))
          .addMutations(add(1)).setIdempotency(token("batched-token", now)).build();
      assertEquals(List.of(0, 0, 0), codes(channel, MutateRowsRequest.newBuilder().setTableName(TABLE)
          .addEntries(twice).addEntries(twice).addEntries(MutateRowsRequest.Entry.newBuilder()
              .setRowKey(ByteString.copyFromUtf8("r")).addMutations(add(100))).build()));
      assertEquals(111, sum(channel), "one of the two entries with one token, and the entry without");

      StatusRuntimeException old = assertThrows(StatusRuntimeException.class, () -> call(channel, MUTATE_ROW,
          addOnce(5, token("late-attempt", now - 11 * 60_000))));
      assertEquals(Status.Code.FAILED_PRECONDITION, old.getStatus().getCode(), old.toString());
      assertTrue(old.getStatus().getDescription().contains("idempotency.start_time"), old.toString());
      StatusRuntimeException small = assertThrows(StatusRuntimeException.class, () -> call(channel, MUTATE_ROW,
          addOnce(5, token("tiny", 0))));
      assertEquals(Status.Code.INVALID_ARGUMENT, small.getStatus().getCode(), small.toString());
      assertTrue(small.getStatus().getDescription().contains("idempotency.token"), small.toString());
      StatusRuntimeException badTime = assertThrows(StatusRuntimeException.class, () -> call(channel, MUTATE_ROW,
          addOnce(5, token("odd-time-token", 0).toBuilder().setStartTime(Timestamp.newBuilder()
              .setSeconds(Long.MAX_VALUE).setNanos(-1)).build())));
      assertEquals(Status.Code.INVALID_ARGUMENT, badTime.getStatus().getCode(), badTime.toString());
      assertTrue(badTime.getStatus().getDescription().contains("idempotency.start_time"), badTime.toString());
      assertEquals(List.of(3), codes(channel, MutateRowsRequest.newBuilder().setTableName(TABLE)
          .addEntries(twice.toBuilder().setIdempotency(token("tiny", 0))).build()), "INVALID_ARGUMENT for the entry");
      assertEquals(111, sum(channel), "nothing refused was applied");
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      node.close();
    }

    InJvmNode again = InJvmNode.start(dir);
    ManagedChannel channel2 = NettyChannelBuilder.forTarget(InJvmNode.endpoint(again.node)).usePlaintext().build();
    try {
      call(channel2, MUTATE_ROW, addOnce(5, token("first-attempt", System.currentTimeMillis())));
      assertEquals(111, sum(channel2), "the node started again on its root still knows the token");
    } finally {
      channel2.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      again.close();
    }
  }
}
