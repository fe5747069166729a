package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowResponse;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.MutateRowsResponse;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.RowSet;
import com.google.bigtable.v2.SessionRequest;
import com.google.bigtable.v2.SessionResponse;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.tabula.cluster.RawGrpc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node answers small MutateRows, MutateRow and ReadRows requests that arrive whole on a
 * path of its own (no per-call streams), and every other request through the generated
 * handler. A gzip-compressed request message always takes the generated handler's path, so
 * each request here is sent twice, plain and compressed, and both answers (messages, or status
 * code and message) must be the same, over a real node and grpc-java on 127.0.0.1.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StrictCallsTest {
  private static final String TABLE = "projects/p/instances/i/tables/t";
  private static final MethodDescriptor<ReadRowsRequest, ReadRowsResponse> READ_ROWS = method(
      MethodDescriptor.MethodType.SERVER_STREAMING, "ReadRows", ReadRowsRequest.getDefaultInstance(),
      ReadRowsResponse.getDefaultInstance());
  private static final MethodDescriptor<MutateRowsRequest, MutateRowsResponse> MUTATE_ROWS = method(
      MethodDescriptor.MethodType.SERVER_STREAMING, "MutateRows", MutateRowsRequest.getDefaultInstance(),
      MutateRowsResponse.getDefaultInstance());
  private static final MethodDescriptor<MutateRowRequest, MutateRowResponse> MUTATE_ROW = method(
      MethodDescriptor.MethodType.UNARY, "MutateRow", MutateRowRequest.getDefaultInstance(),
      MutateRowResponse.getDefaultInstance());

  private InJvmNode node;
  private ManagedChannel channel;

  @BeforeAll
  void start(@TempDir Path dir) {
    node = InJvmNode.start(dir);
    node.client.admin().createTable("t", "f").toCompletableFuture().join();
    channel = NettyChannelBuilder.forTarget(InJvmNode.endpoint(node.node)).usePlaintext().build();
  }

  @AfterAll
  void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    node.close();
  }

  @Test
  void writesAnswerTheSameEitherWay() {
    assertEntries("a batch of rows", List.of(Status.Code.OK, Status.Code.OK),
        assertSame("a batch of rows", Status.Code.OK, () -> mutateRows(entry("a", "1"), entry("b", "2")),
            MUTATE_ROWS));
    assertEntries("a batch with a bad family", List.of(Status.Code.OK, Status.Code.NOT_FOUND),
        assertSame("a batch with a bad family", Status.Code.OK, () -> mutateRows(entry("c", "3"),
            MutateRowsRequest.Entry.newBuilder().setRowKey(ByteString.copyFromUtf8("d")).addMutations(set("nope", "4"))
                .build()), MUTATE_ROWS));
    assertSame("an empty batch", Status.Code.INVALID_ARGUMENT,
        () -> MutateRowsRequest.newBuilder().setTableName(TABLE).build(), MUTATE_ROWS);
    assertEquals(List.of(MutateRowResponse.getDefaultInstance()), assertSame("one row", Status.Code.OK,
        () -> MutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFromUtf8("e"))
            .addMutations(set("f", "5")).build(), MUTATE_ROW));
    assertSame("one row of an unknown table", Status.Code.NOT_FOUND, () -> MutateRowRequest.newBuilder()
        .setTableName("projects/p/instances/i/tables/missing").setRowKey(ByteString.copyFromUtf8("e"))
        .addMutations(set("f", "5")).build(), MUTATE_ROW);
  }

  @Test
  void readsAnswerTheSameEitherWay() {
    ClientCalls.blockingServerStreamingCall(channel, MUTATE_ROWS, CallOptions.DEFAULT,
        mutateRows(entry("r1", "one"), entry("r2", "two"), entry("r3", "three"))).forEachRemaining(r -> { });
    List<Object> some = assertSame("present and absent keys", Status.Code.OK, () -> read("r1", "r3", "zz"),
        READ_ROWS);
    assertEquals(List.of("r1=one", "r3=three"), rows(some), "one response holding the two rows: " + some);
    assertEquals(1, some.size(), "one response holding the two rows: " + some);
    assertEquals(List.of(), rows(assertSame("only absent keys", Status.Code.OK, () -> read("x", "y"), READ_ROWS)));
    assertEquals(List.of("r1=one", "r2=two"), rows(assertSame("a limit", Status.Code.OK,
        () -> read("r1", "r2", "r3").toBuilder().setRowsLimit(2).build(), READ_ROWS)));
    assertEquals(List.of("r2=two", "r3=three"), rows(assertSame("a filter", Status.Code.OK,
        () -> read("r1", "r2", "r3").toBuilder().setFilter(RowFilter.newBuilder()
            .setValueRegexFilter(ByteString.copyFromUtf8("t.*"))).build(), READ_ROWS)));
    assertSame("a bad filter", Status.Code.INVALID_ARGUMENT, () -> read("r1").toBuilder().setFilter(
        RowFilter.newBuilder().setValueRegexFilter(ByteString.copyFromUtf8("("))).build(), READ_ROWS);
    assertSame("a negative limit", Status.Code.INVALID_ARGUMENT,
        () -> read("r1").toBuilder().setRowsLimit(-1).build(), READ_ROWS);
    assertSame("a bad table name", Status.Code.INVALID_ARGUMENT,
        () -> read("r1").toBuilder().setTableName("t").build(), READ_ROWS);
    assertEquals(List.of("r1=one", "r2=two", "r3=three"), rows(assertSame("a range (streamed either way)",
        Status.Code.OK, () -> ReadRowsRequest.newBuilder().setTableName(TABLE)
            .setRows(RowSet.newBuilder().addRowRanges(com.google.bigtable.v2.RowRange.newBuilder()
                .setStartKeyClosed(ByteString.copyFromUtf8("r")).setEndKeyOpen(ByteString.copyFromUtf8("s"))))
            .build(), READ_ROWS)));
  }

  @Test
  void aBatchTooLargeForOneFrameIsAnsweredTheSameEitherWay() {
    MutateRowsRequest.Entry[] entries = new MutateRowsRequest.Entry[100];
    List<Status.Code> allOk = new ArrayList<>();
    for (int i = 0; i < entries.length; i++) {
      entries[i] = entry("big" + i, "x".repeat(1000));
      allOk.add(Status.Code.OK);
    }
    // About 100 KB: more than one HTTP/2 frame, so the node collects the request itself.
    assertEntries("a batch of 100 KB", allOk,
        assertSame("a batch of 100 KB", Status.Code.OK, () -> mutateRows(entries), MUTATE_ROWS));
    assertEquals(List.of("big0=" + "x".repeat(1000), "big50=" + "x".repeat(1000), "big99=" + "x".repeat(1000)),
        rows(assertSame("the rows it wrote", Status.Code.OK, () -> read("big0", "big50", "big99"), READ_ROWS)));
  }

  @Test
  void aMalformedMessageIsRefusedWithAClearError() {
    MethodDescriptor<byte[], byte[]> raw = RawGrpc.method("google.bigtable.v2.Bigtable", "MutateRows",
        MethodDescriptor.MethodType.SERVER_STREAMING);
    // Field 2 (entries) says 100 bytes follow, and 2 do.
    Answer answer = call(raw, new byte[] {0x12, 100, 1, 2}, CallOptions.DEFAULT);
    assertEquals(Status.Code.INVALID_ARGUMENT, answer.code(), answer.toString());
    assertTrue(answer.description().startsWith("entries[0]: is longer than the message"), answer.toString());
  }

  @Test
  void aStreamingCallIsNotHeldBackWaitingForItsRequestToEnd() throws InterruptedException {
    // A bidirectional call whose client sends one message and waits: the node must answer
    // (UNIMPLEMENTED) rather than wait for the request stream to end.
    MethodDescriptor<SessionRequest, SessionResponse> openTable = method(
        MethodDescriptor.MethodType.BIDI_STREAMING, "OpenTable", SessionRequest.getDefaultInstance(),
        SessionResponse.getDefaultInstance());
    CompletableFuture<Status> ended = new CompletableFuture<>();
    var requests = ClientCalls.asyncBidiStreamingCall(
        channel.newCall(openTable, CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS)),
        new StreamObserver<SessionResponse>() {
          @Override
          public void onNext(SessionResponse value) { }

          @Override
          public void onError(Throwable t) {
            ended.complete(Status.fromThrowable(t));
          }

          @Override
          public void onCompleted() {
            ended.complete(Status.OK);
          }
        });
    requests.onNext(SessionRequest.getDefaultInstance());
    Status status = ended.completeOnTimeout(Status.DEADLINE_EXCEEDED.withDescription("no answer in 10 s"), 10,
        TimeUnit.SECONDS).join();
    requests.onCompleted();
    assertEquals(Status.Code.UNIMPLEMENTED, status.getCode(), status.toString());
  }

  /** What a call ended with: its status code and description, and the messages that came before. */
  private record Answer(Status.Code code, String description, List<Object> messages) {}

  /**
   * Sends the request plain and gzip-compressed, checks that both answers are the same and
   * end with {@code expected}; returns the response messages.
   */
  private <Q, R> List<Object> assertSame(String what, Status.Code expected, Supplier<Q> request,
      MethodDescriptor<Q, R> method) {
    Answer plain = call(method, request.get(), CallOptions.DEFAULT);
    Answer compressed = call(method, request.get(), CallOptions.DEFAULT.withCompression("gzip"));
    assertEquals(compressed, plain, what);
    assertEquals(expected, plain.code(), () -> what + ": " + plain);
    return plain.messages();
  }

  /** The MutateRows answer is one response with each entry's status code, in entry order. */
  private static void assertEntries(String what, List<Status.Code> expected, List<Object> answer) {
    assertEquals(1, answer.size(), what + ": " + answer);
    MutateRowsResponse r = (MutateRowsResponse) answer.get(0);
    assertEquals(expected, r.getEntriesList().stream().sorted(java.util.Comparator.comparingLong(
        MutateRowsResponse.Entry::getIndex)).map(e -> Status.fromCodeValue(e.getStatus().getCode()).getCode()).toList(),
        what);
  }

  /** The rows of ReadRows responses as {@code key=value} (one cell per row here). */
  private static List<String> rows(List<Object> responses) {
    List<String> out = new ArrayList<>();
    for (Object o : responses) {
      for (ReadRowsResponse.CellChunk c : ((ReadRowsResponse) o).getChunksList()) {
        if (!c.getRowKey().isEmpty()) {
          out.add(c.getRowKey().toStringUtf8() + "=" + c.getValue().toStringUtf8());
        }
      }
    }
    return out;
  }

  private <Q, R> Answer call(MethodDescriptor<Q, R> method, Q request, CallOptions options) {
    List<Object> out = new ArrayList<>();
    CallOptions withDeadline = options.withDeadlineAfter(20, TimeUnit.SECONDS);
    try {
      if (method.getType() == MethodDescriptor.MethodType.UNARY) {
        out.add(ClientCalls.blockingUnaryCall(channel, method, withDeadline, request));
      } else {
        ClientCalls.blockingServerStreamingCall(channel, method, withDeadline, request).forEachRemaining(out::add);
      }
    } catch (StatusRuntimeException e) {
      return new Answer(e.getStatus().getCode(), e.getStatus().getDescription(), out);
    }
    return new Answer(Status.Code.OK, null, out);
  }

  private static ReadRowsRequest read(String... keys) {
    RowSet.Builder rows = RowSet.newBuilder();
    for (String k : keys) {
      rows.addRowKeys(ByteString.copyFromUtf8(k));
    }
    return ReadRowsRequest.newBuilder().setTableName(TABLE).setRows(rows).build();
  }

  private static MutateRowsRequest mutateRows(MutateRowsRequest.Entry... entries) {
    return MutateRowsRequest.newBuilder().setTableName(TABLE).addAllEntries(List.of(entries)).build();
  }

  private static MutateRowsRequest.Entry entry(String row, String value) {
    return MutateRowsRequest.Entry.newBuilder().setRowKey(ByteString.copyFromUtf8(row)).addMutations(set("f", value))
        .build();
  }

  private static Mutation set(String family, String value) {
    return Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName(family)
        .setColumnQualifier(ByteString.copyFromUtf8("q")).setTimestampMicros(1000)
        .setValue(ByteString.copyFromUtf8(value))).build();
  }

  private static <Q extends Message, R extends Message> MethodDescriptor<Q, R> method(
      MethodDescriptor.MethodType type, String name, Q request, R response) {
    return MethodDescriptor.<Q, R>newBuilder().setType(type)
        .setFullMethodName(MethodDescriptor.generateFullMethodName("google.bigtable.v2.Bigtable", name))
        .setRequestMarshaller(ProtoUtils.marshaller(request)).setResponseMarshaller(ProtoUtils.marshaller(response))
        .build();
  }
}
