package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.bigtable.admin.v2.ColumnFamily;
import com.google.bigtable.admin.v2.CreateTableRequest;
import com.google.bigtable.admin.v2.GcRule;
import com.google.bigtable.admin.v2.Table;
import com.google.bigtable.v2.CheckAndMutateRowRequest;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadModifyWriteRowRequest;
import com.google.bigtable.v2.ReadModifyWriteRule;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.rpc.BadRequest;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.tabula.cluster.RawGrpc;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.ErrorDetails;
import io.tabula.protocol.errors.WireNames;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Requests whose bytes are wrong in ways protobuf's parser refuses on its own (nested too
 * deep, strings that are not UTF-8, no message at all) and requests that parse but cost too
 * much (a read-modify-write rule over the cell limits) get INVALID_ARGUMENT naming the field,
 * with the reason and the field in the status details, within the deadline, and the node
 * logs no error for them and goes on serving. Sent as raw bytes with grpc-java to a node on
 * 127.0.0.1.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MalformedRequestTest {
  private static final String TABLE = "projects/p/instances/i/tables/t";
  private static final Metadata.Key<byte[]> DETAILS = Metadata.Key.of(WireNames.STATUS_DETAILS_TRAILER,
      Metadata.BINARY_BYTE_MARSHALLER);

  private InJvmNode node;
  private ManagedChannel channel;
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();

  @BeforeAll
  void start(@TempDir Path dir) {
    node = InJvmNode.start(dir);
    node.client.admin().createTable("t", "f").toCompletableFuture().join();
    channel = NettyChannelBuilder.forTarget(InJvmNode.endpoint(node.node)).usePlaintext().build();
    log.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(log);
  }

  @AfterAll
  void stop() throws InterruptedException {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(log);
    channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    node.close();
  }

  @BeforeEach
  void clearLog() {
    log.list.clear();
  }

  @Test
  void aFilterNestedDeeperThanProtobufAllowsNamesTheField() {
    byte[] request = ReadRowsRequest.newBuilder().setTableName(TABLE).setRows(RowSet.newBuilder()
        .addRowKeys(ByteString.copyFromUtf8("r"))).setFilter(nestedChains(150)).build().toByteArray();
    StatusRuntimeException e = refused("ReadRows", MethodDescriptor.MethodType.SERVER_STREAMING, request);
    // Each level is two messages (a RowFilter, then its Chain): the 100th message is the 50th chain.
    assertInvalid(e, "filter" + ".chain.filters[0]".repeat(49) + ".chain", "nested more than 100 messages deep");
  }

  /**
   * A timestamp finer than a millisecond, from a client that does not say it writes microsecond
   * timestamps (no {@code bigtable-features} header), is refused naming the field; the official
   * client says it does, and gets it truncated (ErrorConformanceTest).
   */
  @Test
  void aTimestampFinerThanAMillisecondFromAClientThatClaimsNothingNamesTheField() {
    byte[] write = MutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFromUtf8("r"))
        .addMutations(Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName("f")
            .setColumnQualifier(ByteString.copyFromUtf8("q")).setTimestampMicros(1500)
            .setValue(ByteString.copyFromUtf8("v")))).build().toByteArray();
    assertInvalid(refused("MutateRow", MethodDescriptor.MethodType.UNARY, write),
        "mutations[0].set_cell.timestamp_micros", "millisecond granularity");
  }

  @Test
  void aFilterNestedDeeperThanTabulaAllowsButWithinProtobufNamesTheFieldToo() {
    byte[] request = ReadRowsRequest.newBuilder().setTableName(TABLE).setFilter(nestedChains(30)).build()
        .toByteArray();
    StatusRuntimeException e = refused("ReadRows", MethodDescriptor.MethodType.SERVER_STREAMING, request);
    assertInvalid(e, "filter" + ".chain.filters[0]".repeat(21), "levels are allowed");
  }

  @Test
  void gcRulesNestedTooDeepNameTheField() {
    GcRule rule = GcRule.newBuilder().setMaxNumVersions(1).build();
    for (int i = 0; i < 120; i++) {
      rule = GcRule.newBuilder().setUnion(GcRule.Union.newBuilder().addRules(rule)).build();
    }
    byte[] request = CreateTableRequest.newBuilder().setParent("projects/p/instances/i").setTableId("deep")
        .setTable(Table.newBuilder().putColumnFamilies("f", ColumnFamily.newBuilder().setGcRule(rule).build()))
        .build().toByteArray();
    StatusRuntimeException e = refused("google.bigtable.admin.v2.BigtableTableAdmin", "CreateTable",
        MethodDescriptor.MethodType.UNARY, request);
    // Table, the map entry, then a GcRule and its Union per level.
    assertInvalid(e, "table.column_families[0].value.gc_rule" + ".union.rules[0]".repeat(48), "nested more than 100");
  }

  @Test
  void moreInitialSplitsThanTheLimitNameTheField() {
    CreateTableRequest.Builder create = CreateTableRequest.newBuilder().setParent("projects/p/instances/i")
        .setTableId("presplit").setTable(Table.newBuilder().putColumnFamilies("f", ColumnFamily.getDefaultInstance()));
    for (int i = 0; i <= 100_000; i++) {
      create.addInitialSplits(CreateTableRequest.Split.newBuilder().setKey(ByteString.copyFromUtf8(
          Integer.toString(i, 36))));
    }
    StatusRuntimeException e = refused("google.bigtable.admin.v2.BigtableTableAdmin", "CreateTable",
        MethodDescriptor.MethodType.UNARY, create.build().toByteArray());
    assertInvalid(e, "initial_splits", "over the limit of 100000");
  }

  @Test
  void aNameThatIsNotUtf8IsNamed() throws IOException {
    StatusRuntimeException e = refused("MutateRow", MethodDescriptor.MethodType.UNARY, mutationOfANameNotUtf8());
    assertInvalid(e, "table_name", "is not valid UTF-8");
  }

  @Test
  void noMessageAtAllIsRefused() throws Exception {
    // The client half-closes without sending its message.
    CompletableFuture<Status> closed = new CompletableFuture<>();
    ClientCall<byte[], byte[]> call = channel.newCall(method("google.bigtable.v2.Bigtable", "MutateRow",
        MethodDescriptor.MethodType.UNARY), CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS));
    Metadata[] trailers = new Metadata[1];
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onClose(Status status, Metadata t) {
        trailers[0] = t;
        closed.complete(status);
      }
    }, new Metadata());
    call.request(1);
    call.halfClose();
    Status status = closed.get(15, TimeUnit.SECONDS);
    assertInvalid(status.asRuntimeException(trailers[0]), "request", "no message was sent");
  }

  @Test
  void twoMessagesToAMethodThatTakesOneAreRefused() throws Exception {
    // A client-streaming descriptor for a unary method: grpc-java sends both messages.
    MethodDescriptor<byte[], byte[]> twice = method("google.bigtable.v2.Bigtable", "MutateRow",
        MethodDescriptor.MethodType.CLIENT_STREAMING);
    byte[] one = MutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFromUtf8("two"))
        .addMutations(Mutation.newBuilder().setDeleteFromRow(Mutation.DeleteFromRow.getDefaultInstance()))
        .build().toByteArray();
    CompletableFuture<StatusRuntimeException> failed = new CompletableFuture<>();
    io.grpc.stub.StreamObserver<byte[]> requests = io.grpc.stub.ClientCalls.asyncClientStreamingCall(
        channel.newCall(twice, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)),
        new io.grpc.stub.StreamObserver<>() {
          @Override
          public void onNext(byte[] value) { }

          @Override
          public void onError(Throwable t) {
            failed.complete(t instanceof StatusRuntimeException s ? s : new StatusRuntimeException(Status.UNKNOWN));
          }

          @Override
          public void onCompleted() {
            failed.completeExceptionally(new AssertionError("two messages were accepted"));
          }
        });
    requests.onNext(one);
    requests.onNext(one);
    requests.onCompleted();
    assertInvalid(failed.get(15, TimeUnit.SECONDS), "request", "more than the one message");
  }

  @Test
  void requestsOverTheMethodsByteLimitAreRefusedCompressedOrNot() {
    // 17 MiB of zeros: over the 16 MiB a read or admin request may take. Gzip makes it some
    // 17 KiB on the wire, which the node must not inflate past the limit.
    byte[] huge = new byte[17 << 20];
    for (CallOptions options : List.of(CallOptions.DEFAULT, CallOptions.DEFAULT.withCompression("gzip"))) {
      StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(
          channel, method("google.bigtable.v2.Bigtable", "PingAndWarm", MethodDescriptor.MethodType.UNARY),
          options.withDeadlineAfter(20, TimeUnit.SECONDS), huge));
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e::toString);
      assertTrue(e.getStatus().getDescription().startsWith("request: "), e::toString);
    }
    assertQuietLog();
  }

  @Test
  void bytesThatAreNotProtobufAreRefusedAsInvalid() {
    byte[] garbage = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f, 0x01};
    for (String rpc : List.of("MutateRow", "CheckAndMutateRow", "ReadModifyWriteRow", "PingAndWarm")) {
      StatusRuntimeException e = refused(rpc, MethodDescriptor.MethodType.UNARY, garbage);
      assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), rpc + ": " + e);
    }
    assertEquals(Status.Code.INVALID_ARGUMENT, refused("MutateRows", MethodDescriptor.MethodType.SERVER_STREAMING,
        garbage).getStatus().getCode());
    assertQuietLog();
  }

  @Test
  void readModifyWriteRulesOverTheCellLimitsAreAnsweredAtOnce() {
    ReadModifyWriteRowRequest longQualifier = ReadModifyWriteRowRequest.newBuilder().setTableName(TABLE)
        .setRowKey(ByteString.copyFromUtf8("r")).addRules(ReadModifyWriteRule.newBuilder().setFamilyName("f")
            .setColumnQualifier(ByteString.copyFrom(new byte[16 * 1024 + 1])).setIncrementAmount(1)).build();
    assertInvalid(refused("ReadModifyWriteRow", MethodDescriptor.MethodType.UNARY, longQualifier.toByteArray()),
        "rules[0].column_qualifier", "over the limit of 16384");
    ReadModifyWriteRowRequest longFamily = ReadModifyWriteRowRequest.newBuilder().setTableName(TABLE)
        .setRowKey(ByteString.copyFromUtf8("r")).addRules(ReadModifyWriteRule.newBuilder().setFamilyName("f".repeat(65))
            .setColumnQualifier(ByteString.copyFromUtf8("q")).setAppendValue(ByteString.copyFromUtf8("x"))).build();
    assertInvalid(refused("ReadModifyWriteRow", MethodDescriptor.MethodType.UNARY, longFamily.toByteArray()),
        "rules[0].family_name", "over the limit of 64");
  }

  /**
   * Malformed requests leave the node and the connection serving: after bytes that are not
   * protobuf, a table name that is not UTF-8 and a filter nested too deep, all on this
   * channel, a good write on it is stored and read back. The test sends those requests
   * itself, so it holds in whatever order the tests run, and alone.
   */
  @Test
  void aGoodWriteAfterMalformedRequestsIsStoredAndReadBack() throws IOException {
    byte[] garbage = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f, 0x01};
    refused("MutateRow", MethodDescriptor.MethodType.UNARY, garbage);
    refused("MutateRow", MethodDescriptor.MethodType.UNARY, mutationOfANameNotUtf8());
    refused("ReadRows", MethodDescriptor.MethodType.SERVER_STREAMING, ReadRowsRequest.newBuilder()
        .setTableName(TABLE).setFilter(nestedChains(150)).build().toByteArray());

    ByteString row = ByteString.copyFromUtf8("after-malformed");
    byte[] write = MutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(row)
        .addMutations(Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName("f")
            .setColumnQualifier(ByteString.copyFromUtf8("q")).setTimestampMicros(1000)
            .setValue(ByteString.copyFromUtf8("stored")))).build().toByteArray();
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
    ClientCalls.blockingUnaryCall(channel, method("google.bigtable.v2.Bigtable", "MutateRow",
        MethodDescriptor.MethodType.UNARY), options, write);
    byte[] read = ReadRowsRequest.newBuilder().setTableName(TABLE).setRows(RowSet.newBuilder().addRowKeys(row))
        .build().toByteArray();
    List<String> cells = new ArrayList<>();
    ClientCalls.blockingServerStreamingCall(channel, method("google.bigtable.v2.Bigtable", "ReadRows",
        MethodDescriptor.MethodType.SERVER_STREAMING), options, read).forEachRemaining(bytes -> {
          try {
            for (ReadRowsResponse.CellChunk c : ReadRowsResponse.parseFrom(bytes).getChunksList()) {
              cells.add(c.getRowKey().toStringUtf8() + " " + c.getQualifier().getValue().toStringUtf8() + "="
                  + c.getValue().toStringUtf8());
            }
          } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
          }
        });
    assertEquals(List.of("after-malformed q=stored"), cells);
    assertQuietLog();
  }

  @Test
  void aRegexTooSlowForALargeValueGivesUpWithResourceExhausted() {
    // A 1 MiB value of a's and a pattern whose 2002 instructions all stay alive along it:
    // re2j would take about 25 s per value; the node gives up after 5 s of matching.
    byte[] write = MutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFromUtf8("slow"))
        .addMutations(Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName("f")
            .setColumnQualifier(ByteString.copyFromUtf8("q")).setTimestampMicros(1000)
            .setValue(ByteString.copyFromUtf8("a".repeat(1 << 20))))).build().toByteArray();
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
    ClientCalls.blockingUnaryCall(channel, method("google.bigtable.v2.Bigtable", "MutateRow",
        MethodDescriptor.MethodType.UNARY), options, write);
    RowFilter slow = RowFilter.newBuilder().setValueRegexFilter(ByteString.copyFromUtf8("(?:a*){1000}b")).build();
    byte[] read = ReadRowsRequest.newBuilder().setTableName(TABLE).setRows(RowSet.newBuilder()
        .addRowKeys(ByteString.copyFromUtf8("slow"))).setFilter(slow).build().toByteArray();
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ClientCalls
        .blockingServerStreamingCall(channel, method("google.bigtable.v2.Bigtable", "ReadRows",
            MethodDescriptor.MethodType.SERVER_STREAMING), options, read).forEachRemaining(x -> { }));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e::toString);
    assertTrue(String.valueOf(e.getStatus().getDescription()).startsWith(
        "filter.value_regex_filter: matching one subject of 1048576 bytes took more than 5000 ms"), e::toString);
    byte[] check = CheckAndMutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFromUtf8("slow"))
        .setPredicateFilter(slow).addTrueMutations(Mutation.newBuilder().setDeleteFromRow(
            Mutation.DeleteFromRow.getDefaultInstance())).build().toByteArray();
    StatusRuntimeException c = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(
        channel, method("google.bigtable.v2.Bigtable", "CheckAndMutateRow", MethodDescriptor.MethodType.UNARY),
        options, check));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, c.getStatus().getCode(), c::toString);
    assertTrue(String.valueOf(c.getStatus().getDescription()).startsWith("predicate_filter.value_regex_filter: "),
        c::toString);
    assertQuietLog();
  }

  private void assertInvalid(StatusRuntimeException e, String field, String problem) {
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e::toString);
    String d = String.valueOf(e.getStatus().getDescription());
    assertTrue(d.startsWith(field + ": ") && d.contains(problem), () -> "expected '" + field + ": ..." + problem
        + "...', got " + d);
    com.google.rpc.Status details = ErrorDetails.parse(e.getTrailers().get(DETAILS)).orElseThrow();
    assertEquals(Optional.of(ErrorCode.INVALID_ARGUMENT), ErrorDetails.reason(details));
    BadRequest bad = details.getDetailsList().stream().filter(a -> a.is(BadRequest.class)).findFirst()
        .map(a -> {
          try {
            return a.unpack(BadRequest.class);
          } catch (com.google.protobuf.InvalidProtocolBufferException x) {
            throw new AssertionError(x);
          }
        }).orElseThrow(() -> new AssertionError("no BadRequest in " + details));
    assertEquals(field, bad.getFieldViolations(0).getField());
    assertQuietLog();
  }

  /** Nothing at WARN or above but the one line a malformed message may cost, and no stack trace. */
  private void assertQuietLog() {
    for (ILoggingEvent ev : log.list) {
      assertTrue(!ev.getLevel().isGreaterOrEqual(Level.ERROR) && ev.getThrowableProxy() == null,
          () -> "the node logged " + ev.getLevel() + " " + ev.getFormattedMessage());
    }
  }

  /** A filter of {@code levels} chains, each holding the one below and a pass-all filter. */
  private static RowFilter nestedChains(int levels) {
    RowFilter f = RowFilter.newBuilder().setPassAllFilter(true).build();
    for (int i = 0; i < levels; i++) {
      f = RowFilter.newBuilder().setChain(RowFilter.Chain.newBuilder().addFilters(f)
          .addFilters(RowFilter.newBuilder().setPassAllFilter(true))).build();
    }
    return f;
  }

  /** A MutateRowRequest whose table name is not UTF-8, which the generated builders cannot make. */
  private static byte[] mutationOfANameNotUtf8() throws IOException {
    // MutateRowRequest: table_name is field 1 (string), row_key 2 (bytes), mutations 3.
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    out.writeByteArray(1, new byte[] {'p', '/', (byte) 0xc3, (byte) 0x28});
    out.writeByteArray(2, "r".getBytes());
    out.writeMessage(3, Mutation.newBuilder().setDeleteFromRow(Mutation.DeleteFromRow.getDefaultInstance()).build());
    out.flush();
    return bytes.toByteArray();
  }

  private StatusRuntimeException refused(String rpc, MethodDescriptor.MethodType type, byte[] request) {
    return refused("google.bigtable.v2.Bigtable", rpc, type, request);
  }

  private StatusRuntimeException refused(String service, String rpc, MethodDescriptor.MethodType type,
      byte[] request) {
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
    MethodDescriptor<byte[], byte[]> m = method(service, rpc, type);
    try {
      if (type == MethodDescriptor.MethodType.UNARY) {
        ClientCalls.blockingUnaryCall(channel, m, options, request);
      } else {
        ClientCalls.blockingServerStreamingCall(channel, m, options, request).forEachRemaining(x -> { });
      }
    } catch (StatusRuntimeException e) {
      return e;
    }
    throw new AssertionError(rpc + " was accepted");
  }

  private static MethodDescriptor<byte[], byte[]> method(String service, String rpc, MethodDescriptor.MethodType type) {
    return RawGrpc.method(service, rpc, type);
  }
}
