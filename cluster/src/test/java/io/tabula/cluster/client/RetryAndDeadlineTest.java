package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.CheckAndMutateRowResponse;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.MutateRowsResponse;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.BytesValue;
import com.google.protobuf.ByteString;
import com.google.protobuf.StringValue;
import com.google.bigtable.v2.MutateRowResponse;
import io.grpc.Status;
import io.tabula.client.CheckAndMutate;
import io.tabula.client.Filter;
import io.tabula.client.MutationResult;
import io.tabula.client.Query;
import io.tabula.client.ReadModifyWrite;
import io.tabula.client.RetrySettings;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.client.TabulaException;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.locations.LocateRequest;
import io.tabula.protocol.locations.LocateResponse;
import io.tabula.protocol.locations.TabletLocation;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pekko.grpc.GrpcServiceException;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the client retries and for how long, against a closed port and against a
 * {@link FakeNode} that fails (with a Tabula node's status details), stalls or breaks
 * streams on demand: idempotent operations are tried again up to the attempt limit or the
 * total timeout, non-idempotent ones once (but again, located anew, after a stale route,
 * which the trailer or the reason tells, never the text), a node's suggested delay is
 * waited out, a stalled attempt ends at its deadline, a batch resends only its idempotent
 * entries that failed retryably, and a broken scan goes on after the last row it delivered.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class RetryAndDeadlineTest {
  /** Backoffs of 10 to 50 ms, attempts of 300 ms, 1.5 s in all. */
  private static final RetrySettings SHORT = new RetrySettings(0, Duration.ofMillis(10), Duration.ofMillis(50), 2.0,
      Duration.ofMillis(300), Duration.ofMillis(1_500));
  /** Slack for scheduling on a busy machine; the bounds checked are about retries, not speed. */
  private static final long SLACK_MILLIS = 3_000;

  private static FakeNode fake;
  private TabulaClient client;

  @BeforeAll
  static void startFake() {
    fake = FakeNode.start();
  }

  @AfterAll
  static void stopFake() {
    if (fake != null) {
      fake.close();
    }
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    fake.reset();
  }

  /** A client of the fake node with {@code retry}, whose connections are up. */
  private void start(RetrySettings retry) {
    client = connected(builder().endpoint(fake.endpoint()).retry(retry).build());
  }

  /** Clients run in the fake node's actor system: starting one of their own per test takes long. */
  private static TabulaClient.Builder builder() {
    return TabulaClient.builder().actorSystem(fake.system());
  }

  /**
   * Waits until the client's connections to the fake node are up, so that the first attempt
   * of the call under test is not spent on connecting (slow on a busy machine): the seed's
   * unary channel answers ListTables, which the fake does not serve, and the scan channel a
   * ReadRows the fake answers UNIMPLEMENTED; then the fake forgets those requests.
   */
  private TabulaClient connected(TabulaClient c) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (Supplier<CompletionStage<?>> call : List.<Supplier<CompletionStage<?>>>of(() -> c.admin().listTables(),
        () -> c.readRows(Query.table("warm-up")))) {
      while (failure(call.get()).code() != Status.Code.UNIMPLEMENTED) {
        assertTrue(System.nanoTime() < deadline, "no connection to the fake node within 30 s");
      }
    }
    fake.forgetRequests();
    return c;
  }

  @Test
  void aClosedPortIsUnavailableWithinTheTotalTimeout() throws IOException {
    // Attempts of 1 s: the first one also starts the channel, which takes a while on a busy machine.
    RetrySettings retry = SHORT.withAttemptTimeout(Duration.ofSeconds(1));
    client = builder().endpoint("127.0.0.1:" + closedPort()).retry(retry).build();

    long t0 = System.nanoTime();
    TabulaException read = failure(client.readRow("t", "r"));
    long readMillis = millisSince(t0);
    assertEquals(Status.Code.UNAVAILABLE, read.code(), read.getMessage());
    assertTrue(read.isConnectionFailure(), "told by the failure's type: " + read.getCause());
    assertTrue(read.getMessage().matches(".*\\(after \\d+ attempts\\)"), "a read is retried: " + read.getMessage());
    assertTrue(readMillis < retry.totalTimeout().toMillis() + retry.attemptTimeout().toMillis() + SLACK_MILLIS,
        "gave up after " + readMillis + " ms");

    TabulaException idempotent = failure(client.apply("t", RowMutation.create("r").setCell("f", "q", 1_000, "v")));
    assertEquals(Status.Code.UNAVAILABLE, idempotent.code());
    assertTrue(idempotent.getMessage().contains("attempts)"), "retried: " + idempotent.getMessage());

    TabulaException once = failure(client.apply("t", RowMutation.create("r").setCell("f", "q", "server time")));
    assertEquals(Status.Code.UNAVAILABLE, once.code());
    assertFalse(once.getMessage().contains("attempts)"), "tried once: " + once.getMessage());
  }

  @Test
  void aStalledAttemptEndsAtItsDeadlineAndOnlyIdempotentOnesAreTriedAgain() {
    start(SHORT);
    fake.<MutateRowRequest>on("mutateRow", req -> FakeNode.never());

    long t0 = System.nanoTime();
    TabulaException idempotent = failure(client.apply("t", RowMutation.create("r").setCell("f", "q", 1_000, "v")));
    long millis = millisSince(t0);
    assertEquals(Status.Code.DEADLINE_EXCEEDED, idempotent.code(), idempotent.getMessage());
    int attempts = fake.calls("mutateRow");
    // 300 ms attempts and backoffs of at most 50 ms: at least 2, at most 1,500 / 300 + 1 attempts start.
    assertTrue(attempts >= 2 && attempts <= 6, attempts + " attempts");
    assertTrue(millis < SHORT.totalTimeout().toMillis() + SHORT.attemptTimeout().toMillis() + SLACK_MILLIS,
        "gave up after " + millis + " ms");

    TabulaException once = failure(client.apply("t", RowMutation.create("r").setCell("f", "q", "server time")));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, once.code());
    assertEquals(attempts + 1, fake.calls("mutateRow"), "a server-time cell is written once at most");
  }

  @Test
  void aDeadlineShorterThanTheAttemptTimeoutBoundsTheOnlyAttempt() {
    client = connected(builder().endpoint(fake.endpoint()).deadline(Duration.ofMillis(700)).build());
    fake.<ReadRowsRequest>on("readRows", req -> Source.never());

    long t0 = System.nanoTime();
    TabulaException e = failure(client.readRow("t", "r"));
    long millis = millisSince(t0);
    assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code(), e.getMessage());
    assertEquals(1, fake.calls("readRows"), "no time is left for a second attempt");
    assertTrue(millis >= 600 && millis < 700 + SLACK_MILLIS, "ended after " + millis + " ms");
  }

  @Test
  void retryableFailuresAreRetriedUpToMaxAttemptsOnlyForIdempotentCalls() {
    // Attempts long enough that each one reaches the fake node even on a busy machine: this counts them.
    start(SHORT.withMaxAttempts(4).withAttemptTimeout(Duration.ofSeconds(5)).withTotalTimeout(Duration.ofSeconds(30)));
    Status down = Status.UNAVAILABLE.withDescription("tablet moving");
    fake.on("mutateRow", req -> FakeNode.failing(down));
    fake.on("checkAndMutateRow", req -> FakeNode.failing(down));
    fake.on("readModifyWriteRow", req -> FakeNode.failing(down));
    fake.on("readRows", req -> Source.failed(new GrpcServiceException(down)));

    assertEquals("UNAVAILABLE: tablet moving (after 4 attempts)", failure(client.apply("t",
        RowMutation.create("r").setCell("f", "q", 1_000, "v"))).getMessage());
    assertEquals(4, fake.calls("mutateRow"));
    assertEquals(Status.Code.UNAVAILABLE, failure(client.readRow("t", "r")).code());
    assertEquals(4, fake.calls("readRows"));

    assertEquals("UNAVAILABLE: tablet moving", failure(client.apply("t", RowMutation.create("r")
        .setCell("f", "q", "v"))).getMessage());
    assertEquals(5, fake.calls("mutateRow"));
    failure(client.checkAndMutate("t", CheckAndMutate.ifMatches(Filter.pass(), RowMutation.create("r")
        .setCell("f", "q", 1_000, "v"))));
    assertEquals(1, fake.calls("checkAndMutateRow"), "check-and-mutate is never retried");
    failure(client.readModifyWrite("t", ReadModifyWrite.create("r").increment("f", "q", 1)));
    assertEquals(1, fake.calls("readModifyWriteRow"), "read-modify-write is never retried");
  }

  /**
   * Serves the Locations service: every table is one tablet on the fake node, whose id is
   * "tablet-n" for the n-th lookup, so a request that names "tablet-2" was located again.
   */
  private void serveLocations() {
    fake.<LocateRequest>on("locate", req -> CompletableFuture.completedFuture(LocateResponse.newBuilder()
        .addTablets(TabletLocation.newBuilder().setTabletId("tablet-" + fake.calls("locate"))
            .setEndpoint(fake.endpoint()))
        .build()));
  }

  /** A check-and-mutate that fails once with {@code first}, then matches. */
  private void checkAndMutateFailsOnceWith(GrpcServiceException first) {
    fake.on("checkAndMutateRow", req -> fake.calls("checkAndMutateRow") == 1 ? FakeNode.failing(first)
        : CompletableFuture.completedFuture(CheckAndMutateRowResponse.newBuilder().setPredicateMatched(true).build()));
  }

  private static CheckAndMutate aCheckAndMutate() {
    return CheckAndMutate.ifMatches(Filter.pass(), RowMutation.create("r").setCell("f", "q", "v"));
  }

  @Test
  void aStaleRouteToldByTheTrailerAloneIsLocatedAgainAndRetriedEvenForCheckAndMutate() {
    serveLocations();
    start(SHORT);
    // Neither the reason nor the words "stale route": only the trailer says it.
    checkAndMutateFailsOnceWith(FakeNode.staleRouteByTrailer("tablet-1 does not hold row r"));
    assertTrue(join(client.checkAndMutate("t", aCheckAndMutate())));
    assertEquals(List.of("tablet-1", "tablet-2"), fake.tablets("checkAndMutateRow"),
        "the node applied nothing the first time; the second attempt names the tablet located again");
    assertEquals(2, fake.calls("locate"));
  }

  @Test
  void aStaleRouteToldByTheReasonAloneIsLocatedAgainAndRetriedEvenForCheckAndMutate() {
    serveLocations();
    start(SHORT);
    // The STALE_ROUTE reason in the status details, no trailer, no telling words.
    checkAndMutateFailsOnceWith(FakeNode.refusal(ErrorCode.STALE_ROUTE, "tablet-1 does not hold row r", null));
    assertTrue(join(client.checkAndMutate("t", aCheckAndMutate())));
    assertEquals(List.of("tablet-1", "tablet-2"), fake.tablets("checkAndMutateRow"));
    assertEquals(2, fake.calls("locate"));
  }

  @Test
  void aRefusalThatMerelySaysStaleRouteIsNotOne() {
    serveLocations();
    start(SHORT);
    checkAndMutateFailsOnceWith(new GrpcServiceException(Status.FAILED_PRECONDITION.withDescription(
        "stale route: tablet-1 has split")));
    TabulaException e = failure(client.checkAndMutate("t", aCheckAndMutate()));
    assertEquals(Status.Code.FAILED_PRECONDITION, e.code());
    assertEquals(Optional.empty(), e.reason());
    assertEquals("stale route: tablet-1 has split", e.description());
    assertEquals(1, fake.calls("checkAndMutateRow"), "not retried: a check-and-mutate is sent once");
    assertEquals(1, fake.calls("locate"), "the location is kept");
  }

  @Test
  void theNodesReasonReachesTheCallerAndItsSuggestedDelayIsWaitedOut() {
    // Backoffs of 10 to 50 ms: only a retrier that honours the node's 700 ms waits that long.
    start(SHORT.withTotalTimeout(Duration.ofSeconds(10)));
    Duration asked = Duration.ofMillis(700);
    List<Long> arrivals = new CopyOnWriteArrayList<>();
    fake.<MutateRowRequest>on("mutateRow", req -> {
      arrivals.add(System.nanoTime());
      return arrivals.size() % 2 == 1 ? FakeNode.failing(FakeNode.refusal(ErrorCode.UNAVAILABLE, "tablet t-1 is moving",
          asked)) : CompletableFuture.completedFuture(MutateRowResponse.getDefaultInstance());
    });

    TabulaException once = failure(client.apply("t", RowMutation.create("r").setCell("f", "q", "server time")));
    assertEquals(Optional.of(ErrorCode.UNAVAILABLE), once.reason());
    assertEquals(Optional.of(asked), once.retryDelay());
    assertEquals("tablet t-1 is moving", once.description());
    assertEquals(1, arrivals.size(), "a server-time cell is written once at most");

    arrivals.clear();
    join(client.apply("t", RowMutation.create("r").setCell("f", "q", 1_000, "v")));
    assertEquals(2, arrivals.size());
    long waited = TimeUnit.NANOSECONDS.toMillis(arrivals.get(1) - arrivals.get(0));
    assertTrue(waited >= asked.toMillis(), "the second attempt came " + waited + " ms after the first");
  }

  @Test
  void aBrokenScanWaitsTheNodesSuggestedDelayBeforeItGoesOn() {
    start(SHORT.withTotalTimeout(Duration.ofSeconds(10)));
    Duration asked = Duration.ofMillis(700);
    List<Long> arrivals = new CopyOnWriteArrayList<>();
    fake.<ReadRowsRequest>on("readRows", req -> {
      arrivals.add(System.nanoTime());
      return arrivals.size() == 1 ? Source.failed(FakeNode.refusal(ErrorCode.UNAVAILABLE, "tablet t-1 is moving",
          asked)) : Source.single(row("a"));
    });
    List<Row> rows = join(client.source(Query.table("t")).runWith(org.apache.pekko.stream.javadsl.Sink.seq(),
        fake.system()));
    assertEquals(List.of("a"), rows.stream().map(Row::keyUtf8).toList());
    assertEquals(2, arrivals.size());
    long waited = TimeUnit.NANOSECONDS.toMillis(arrivals.get(1) - arrivals.get(0));
    assertTrue(waited >= asked.toMillis(), "the scan went on " + waited + " ms after it broke");
  }

  @Test
  void aBatchResendsOnlyIdempotentEntriesThatFailedRetryably() {
    start(SHORT);
    // First request: entry 0 unavailable, 1 fine, 2 not found, 3 unavailable. Later ones: all fine.
    fake.<MutateRowsRequest>on("mutateRows", req -> Source.single(fake.calls("mutateRows") == 1
        ? entries(Status.Code.UNAVAILABLE, Status.Code.OK, Status.Code.NOT_FOUND, Status.Code.UNAVAILABLE)
        : entries(java.util.Collections.nCopies(req.getEntriesCount(), Status.Code.OK)
            .toArray(Status.Code[]::new))));

    List<MutationResult> results = join(client.applyBatch("t", List.of(
        RowMutation.create("a").setCell("f", "q", 1_000, "v"),
        RowMutation.create("b").setCell("f", "q", 1_000, "v"),
        RowMutation.create("c").setCell("f", "q", 1_000, "v"),
        RowMutation.create("d").setCell("f", "q", "server time"))));

    assertEquals(List.of(true, true, false, false), results.stream().map(MutationResult::ok).toList());
    assertEquals(Status.Code.NOT_FOUND, results.get(2).error().orElseThrow().code());
    assertEquals(Status.Code.UNAVAILABLE, results.get(3).error().orElseThrow().code());
    List<MutateRowsRequest> sent = fake.requests("mutateRows");
    assertEquals(2, sent.size());
    assertEquals(List.of("a"), sent.get(1).getEntriesList().stream().map(e -> e.getRowKey().toStringUtf8())
        .toList(), "only the idempotent entry that failed retryably goes again");
  }

  @Test
  void aBrokenScanGoesOnAfterTheLastRowDelivered() {
    start(SHORT);
    List<String> table = List.of("a", "b", "c", "d", "e");
    // The first stream sends a, b and c, and breaks a moment later (an error right behind the
    // rows may overtake them); later ones serve the rows after the key the request starts
    // after, up to its limit.
    fake.<ReadRowsRequest>on("readRows", req -> {
      if (fake.calls("readRows") == 1) {
        return Source.from(table.subList(0, 3)).map(RetryAndDeadlineTest::row).concat(Source.single(0)
            .initialDelay(Duration.ofMillis(300)).flatMapConcat(x -> Source.failed(new GrpcServiceException(
                Status.UNAVAILABLE.withDescription("node restarting")))));
      }
      if (fake.calls("readRows") <= 4) {
        return Source.failed(new GrpcServiceException(Status.UNAVAILABLE.withDescription("still restarting")));
      }
      String after = req.getRows().getRowRangesCount() == 0 ? ""
          : req.getRows().getRowRanges(0).getStartKeyOpen().toStringUtf8();
      return Source.from(table).filter(k -> k.compareTo(after) > 0).take(req.getRowsLimit()).map(
          RetryAndDeadlineTest::row);
    });

    // A streamed scan resumes; readRows (gather in memory) would repeat the whole call instead.
    List<Row> rows = join(client.source(Query.table("t").limit(10)).runWith(
        org.apache.pekko.stream.javadsl.Sink.seq(), fake.system()));
    assertEquals(table, rows.stream().map(Row::keyUtf8).toList(), "every row once, in order");
    assertEquals(5, fake.calls("readRows"));
    ReadRowsRequest again = fake.<ReadRowsRequest>requests("readRows").get(4);
    assertEquals(RowSet.newBuilder().addRowRanges(RowRange.newBuilder().setStartKeyOpen(ByteString.copyFromUtf8(
        "c"))).build(), again.getRows(), "resumed after the last row delivered");
    assertEquals(7, again.getRowsLimit(), "the limit less the 3 rows delivered");
  }

  @Test
  void aScanIsNotRetriedAfterANonRetryableFailureOrAMalformedStream() {
    start(SHORT);
    fake.<ReadRowsRequest>on("readRows", req -> fake.calls("readRows") == 1
        ? Source.from(List.of(row("a"))).concat(Source.failed(new GrpcServiceException(Status.INTERNAL)))
        : Source.single(ReadRowsResponse.newBuilder().addChunks(chunk("x").toBuilder().setCommitRow(false))
            .build()));

    assertEquals(Status.Code.INTERNAL, failure(client.readRows(Query.table("t"))).code());
    assertEquals(1, fake.calls("readRows"));
    TabulaException malformed = failure(client.readRows(Query.table("t")));
    assertEquals(Status.Code.INTERNAL, malformed.code());
    assertTrue(malformed.getMessage().contains("ended inside row x"), malformed.getMessage());
    assertEquals(2, fake.calls("readRows"));
  }

  private static MutateRowsResponse entries(Status.Code... codes) {
    MutateRowsResponse.Builder b = MutateRowsResponse.newBuilder();
    for (int i = 0; i < codes.length; i++) {
      b.addEntries(MutateRowsResponse.Entry.newBuilder().setIndex(i).setStatus(com.google.rpc.Status.newBuilder()
          .setCode(codes[i].value()).setMessage(codes[i].name())));
    }
    return b.build();
  }

  static ReadRowsResponse row(String key) {
    return ReadRowsResponse.newBuilder().addChunks(chunk(key)).build();
  }

  private static ReadRowsResponse.CellChunk chunk(String key) {
    return ReadRowsResponse.CellChunk.newBuilder().setRowKey(ByteString.copyFromUtf8(key))
        .setFamilyName(StringValue.of("f")).setQualifier(BytesValue.of(ByteString.copyFromUtf8("q")))
        .setTimestampMicros(1_000).setValue(ByteString.copyFromUtf8(key)).setCommitRow(true).build();
  }

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  private static long millisSince(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  private static <T> T join(CompletionStage<T> stage) {
    return stage.toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  private static TabulaException failure(CompletionStage<?> stage) {
    CompletionException e = assertThrows(CompletionException.class, () -> join(stage));
    return assertInstanceOf(TabulaException.class, e.getCause());
  }
}
