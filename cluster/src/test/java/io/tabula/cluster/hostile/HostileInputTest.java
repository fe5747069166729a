package io.tabula.cluster.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tabula.cluster.NodeProcess;
import io.tabula.cluster.RawGrpc;
import io.tabula.cluster.hostile.HostileRequests.Request;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node as a hostile client meets it: malformed, extreme and random requests
 * ({@link HostileRequests}) to every RPC of its services, sent as raw bytes with grpc-java
 * over several connections, many at once, some streams abandoned mid-way, to a node in its
 * own JVM with a small heap. Checked:
 *
 * <ul>
 *   <li>every call ends with a status within its deadline (a DEADLINE_EXCEEDED is a call the
 *       node left unanswered), and no bad request gets INTERNAL, UNKNOWN, DATA_LOSS or
 *       UNAVAILABLE: bad input is the client's, and says so;
 *   <li>after every batch a valid write and its read-back succeed;
 *   <li>the node is alive at the end, and its log holds no ERROR, no stack trace and no
 *       "Promise already completed".
 * </ul>
 *
 * <p>Seeded: the seed is printed; {@code -Dtabula.seed=N} replays one run's requests (the
 * order they reach the node in still depends on timing). {@code -Dtabula.hostile.requests=N}
 * makes a longer run (default 3000, about 20 s here).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class HostileInputTest {
  private static final int DEFAULT_REQUESTS = 3000;
  private static final int BATCH = 100;
  private static final int CONNECTIONS = 4;
  private static final int IN_FLIGHT = 24;
  private static final Duration DEADLINE = Duration.ofSeconds(15);
  /** Statuses that mean the node failed, not that the request was bad. */
  private static final Set<Status.Code> NODE_FAILURES = Set.of(Status.Code.INTERNAL, Status.Code.UNKNOWN,
      Status.Code.DATA_LOSS, Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);

  @TempDir
  Path dir;

  /** What each call ended with, by RPC then status code. */
  private final Map<String, Map<String, AtomicLong>> outcomes = new ConcurrentHashMap<>();
  private final List<String> failures = Collections.synchronizedList(new ArrayList<>());

  @Test
  void everyHostileRequestGetsAClearAnswerAndTheNodeKeepsServing() throws Exception {
    long seed = Long.getLong("tabula.seed", ThreadLocalRandom.current().nextLong());
    int total = Integer.getInteger("tabula.hostile.requests", DEFAULT_REQUESTS);
    System.out.println("HostileInputTest seed " + seed + " (replay with -Dtabula.seed=" + seed + "), " + total
        + " requests");
    int port = NodeProcess.freePort();
    Path log = dir.resolve("node.log");
    List<ManagedChannel> channels = new ArrayList<>();
    try (NodeProcess node = NodeProcess.start(dir.resolve("data"), port, NodeProcess.freePort(), log,
        List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError"))) {
      node.awaitListening(Duration.ofSeconds(90));
      for (int i = 0; i < CONNECTIONS; i++) {
        channels.add(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
            .maxInboundMessageSize(64 << 20).build());
      }
      HostileRequests.createTable(channels.get(0));
      HostileRequests requests = new HostileRequests(seed);
      Semaphore inFlight = new Semaphore(IN_FLIGHT);
      long started = System.nanoTime();
      for (int sent = 0; sent < total; sent += BATCH) {
        List<CompletableFuture<Void>> batch = new ArrayList<>();
        for (int i = sent; i < Math.min(total, sent + BATCH); i++) {
          inFlight.acquire();
          batch.add(send(channels.get(i % CONNECTIONS), requests.next(), seed + i)
              .whenComplete((ok, err) -> inFlight.release()));
        }
        CompletableFuture.allOf(batch.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
        assertTrue(node.process().isAlive(), () -> "the node died; its log:\n" + node.logTail(60));
        try {
          probe(channels.get(sent / BATCH % CONNECTIONS), sent / BATCH);
        } catch (RuntimeException e) {
          // What the node did meanwhile is what a person debugging this needs.
          throw new AssertionError("seed " + seed + ": the write and read-back after " + (sent + BATCH)
              + " requests failed: " + e + "\nnode log tail:\n" + node.logTail(120), e);
        }
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      System.out.printf("HostileInputTest: %d requests in %.1f s, seed %d%n%s", total, seconds, seed, summary());
      assertTrue(node.process().isAlive(), () -> "the node died; its log:\n" + node.logTail(60));
      List<String> badLines = badLogLines(log);
      if (!failures.isEmpty() || !badLines.isEmpty()) {
        throw new AssertionError("seed " + seed + ": " + failures.size() + " calls failed, first ones:\n  "
            + String.join("\n  ", failures.subList(0, Math.min(30, failures.size())))
            + "\nnode log lines that must not be there (" + badLines.size() + "):\n  "
            + String.join("\n  ", badLines.subList(0, Math.min(30, badLines.size())))
            + "\nnode log tail:\n" + node.logTail(60));
      }
    } finally {
      for (ManagedChannel c : channels) {
        c.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * Sends one request: unary and server-streaming calls whole (some streams abandoned after
   * their first answer or at once), client-streaming ones with the message sent once or twice,
   * some cancelled half-way. Completes when the call has ended; records its outcome.
   */
  private CompletableFuture<Void> send(ManagedChannel channel, Request r, long callSeed) {
    java.util.SplittableRandom dice = new java.util.SplittableRandom(callSeed);
    MethodType type = r.method().isClientStreaming() && r.method().isServerStreaming() ? MethodType.BIDI_STREAMING
        : r.method().isClientStreaming() ? MethodType.CLIENT_STREAMING
        : r.method().isServerStreaming() ? MethodType.SERVER_STREAMING : MethodType.UNARY;
    boolean abandon = type != MethodType.UNARY && dice.nextInt(4) == 0;
    boolean abandonAtOnce = abandon && dice.nextBoolean();
    CompletableFuture<Void> done = new CompletableFuture<>();
    ClientCall<byte[], byte[]> call = channel.newCall(RawGrpc.method(r.service(), r.method().getName(), type),
        CallOptions.DEFAULT.withDeadlineAfter(DEADLINE.toMillis(), TimeUnit.MILLISECONDS));
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onMessage(byte[] message) {
        if (abandon) {
          call.cancel("the test abandons the stream after its first answer", null);
        } else {
          call.request(1);
        }
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        record(r, status, abandon);
        done.complete(null);
      }
    }, new Metadata());
    call.request(1);
    call.sendMessage(r.bytes());
    if (type == MethodType.BIDI_STREAMING || type == MethodType.CLIENT_STREAMING) {
      if (dice.nextBoolean()) {
        call.sendMessage(r.bytes());
      }
    }
    if (abandonAtOnce) {
      call.cancel("the test abandons the stream before any answer", null);
    } else {
      call.halfClose();
    }
    return done;
  }

  private void record(Request r, Status status, boolean abandoned) {
    outcomes.computeIfAbsent(r.rpc(), k -> new ConcurrentHashMap<>())
        .computeIfAbsent(status.getCode().name(), k -> new AtomicLong()).incrementAndGet();
    boolean cancelledByUs = abandoned && status.getCode() == Status.Code.CANCELLED;
    if (NODE_FAILURES.contains(status.getCode()) && !cancelledByUs) {
      failures.add(r.rpc() + " [" + r.kind() + ": " + r.what() + "] -> " + status.getCode() + ": "
          + status.getDescription() + " (request " + r.bytes().length + " bytes, starting "
          + HexFormat.of().formatHex(r.bytes(), 0, Math.min(24, r.bytes().length)) + ")");
    }
  }

  /** A valid write and its read-back, which must succeed between batches. */
  private void probe(ManagedChannel channel, int n) {
    String row = "probe-" + n;
    String value = "value-" + n;
    byte[] write = MutateRowRequest.newBuilder().setTableName(HostileRequests.TABLE)
        .setRowKey(ByteString.copyFromUtf8(row)).addMutations(Mutation.newBuilder().setSetCell(Mutation.SetCell
            .newBuilder().setFamilyName(HostileRequests.FAMILY).setColumnQualifier(ByteString.copyFromUtf8("q"))
            .setTimestampMicros(1000).setValue(ByteString.copyFromUtf8(value)))).build().toByteArray();
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    io.grpc.stub.ClientCalls.blockingUnaryCall(channel, RawGrpc.method("google.bigtable.v2.Bigtable", "MutateRow",
        MethodType.UNARY), options, write);
    byte[] read = ReadRowsRequest.newBuilder().setTableName(HostileRequests.TABLE).setRows(RowSet.newBuilder()
        .addRowKeys(ByteString.copyFromUtf8(row))).build().toByteArray();
    List<String> values = new ArrayList<>();
    io.grpc.stub.ClientCalls.blockingServerStreamingCall(channel, RawGrpc.method("google.bigtable.v2.Bigtable",
        "ReadRows", MethodType.SERVER_STREAMING), options, read).forEachRemaining(bytes -> {
          try {
            ReadRowsResponse.parseFrom(bytes).getChunksList().forEach(c -> values.add(c.getValue().toStringUtf8()));
          } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
          }
        });
    assertEquals(List.of(value), values, "the probe row after batch " + n);
  }


  /** Lines of the node's log that bad input must never cause. */
  private static List<String> badLogLines(Path log) throws IOException {
    List<String> bad = new ArrayList<>();
    for (String line : Files.readAllLines(log)) {
      if (line.contains(" ERROR ") || line.startsWith("\tat ") || line.contains("Promise already completed")
          || line.contains("Exception in thread")) {
        bad.add(line);
      }
    }
    return bad;
  }

  private String summary() {
    StringBuilder b = new StringBuilder("statuses per RPC:\n");
    new TreeMap<>(outcomes).forEach((rpc, codes) -> b.append(String.format("  %-45s %s%n", rpc,
        new TreeMap<>(codes))));
    return b.toString();
  }
}
