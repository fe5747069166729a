package io.tabula.cluster.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.CheckAndMutateRowRequest;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.tabula.cluster.NodeProcess;
import io.tabula.cluster.RawGrpc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regular expressions that re2j would expand past any heap, sent in ReadRows filters and
 * CheckAndMutateRow predicates to a node in its own JVM with a small heap (which exits on
 * running out of memory), in parallel with ordinary reads and writes on other connections.
 * Every hostile call must get INVALID_ARGUMENT naming its field, every ordinary call must
 * succeed, and the node must be alive at the end with its resident memory within its heap's
 * reach. Without the regex budget the first {@code ((a{1000}){1000}){1000}} fills the heap and
 * the node exits (or, with a large heap, stops answering anyone).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class HostileRegexTest {
  private static final String TABLE = HostileRequests.TABLE;
  private static final String FAMILY = HostileRequests.FAMILY;
  private static final String DATA = "google.bigtable.v2.Bigtable";
  private static final int HOSTILE_ROUNDS = 20;
  private static final CallOptions DEADLINE = CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS);

  @TempDir
  Path dir;

  /** Patterns whose programs would be far too large, each with the words its refusal must contain. */
  private static List<String> hostilePatterns() {
    StringJoiner alternation = new StringJoiner("|");
    for (int i = 0; i < 300; i++) {
      alternation.add("k" + i + "[0-9a-f]{1000}");
    }
    return List.of(
        "((a{1000}){1000}){1000}",
        "(((((x{100}){100}){100}){100}){100})",
        "(?:(?:[\\x00-\\xff]{1000}){1000})",
        "[\\x00-\\xff]{1000}".repeat(100),
        "(?s:.{1000}){999}.*",
        alternation.toString(),
        "(".repeat(3000) + "a" + ")".repeat(3000));
  }

  @Test
  void hostileRegexesAreRefusedWhileOrdinaryTrafficIsServed() throws Exception {
    int port = NodeProcess.freePort();
    Path log = dir.resolve("node.log");
    List<ManagedChannel> channels = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try (NodeProcess node = NodeProcess.start(dir.resolve("data"), port, NodeProcess.freePort(), log,
        List.of("-Xmx192m", "-XX:+ExitOnOutOfMemoryError"))) {
      node.awaitListening(Duration.ofSeconds(90));
      for (int i = 0; i < 4; i++) {
        channels.add(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build());
      }
      HostileRequests.createTable(channels.get(0));
      List<String> failures = Collections.synchronizedList(new ArrayList<>());
      AtomicInteger hostileRefused = new AtomicInteger();
      AtomicInteger ordinaryServed = new AtomicInteger();
      List<Future<?>> work = new ArrayList<>();
      long started = System.nanoTime();
      // Three clients send hostile patterns, each in every field that takes one.
      for (int c = 0; c < 3; c++) {
        ManagedChannel channel = channels.get(c);
        work.add(pool.submit(() -> {
          for (int round = 0; round < HOSTILE_ROUNDS; round++) {
            for (String pattern : hostilePatterns()) {
              for (Hostile h : hostileCalls(pattern)) {
                Status status = h.send(channel);
                if (status.getCode() == Status.Code.INVALID_ARGUMENT && status.getDescription() != null
                    && status.getDescription().startsWith(h.field() + ": ")) {
                  hostileRefused.incrementAndGet();
                } else {
                  failures.add(h.field() + " " + shorten(pattern) + " -> " + status);
                }
              }
            }
          }
        }));
      }
      // Meanwhile ordinary writes and reads on their own connection.
      ManagedChannel ordinary = channels.get(3);
      for (int c = 0; c < 3; c++) {
        int client = c;
        work.add(pool.submit(() -> {
          for (int i = 0; i < 150; i++) {
            String row = "row-" + client + "-" + i;
            try {
              write(ordinary, row, "value-" + i);
              List<String> values = read(ordinary, row, RowFilter.newBuilder()
                  .setValueRegexFilter(ByteString.copyFromUtf8("value-[0-9]{1,4}")).build());
              if (!values.equals(List.of("value-" + i))) {
                failures.add("ordinary read of " + row + " returned " + values);
              } else {
                ordinaryServed.incrementAndGet();
              }
            } catch (StatusRuntimeException e) {
              failures.add("ordinary call for " + row + " failed: " + e.getStatus());
            }
          }
        }));
      }
      for (Future<?> f : work) {
        f.get(3, TimeUnit.MINUTES);
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      assertTrue(node.process().isAlive(), () -> "the node died; its log:\n" + node.logTail(60));
      long rssKib = rssKib(node.pid());
      System.out.printf("HostileRegexTest: %d hostile calls refused, %d ordinary write+read pairs served in %.1f s;"
          + " node resident memory %d MiB (heap limit 192 MiB)%n", hostileRefused.get(), ordinaryServed.get(),
          seconds, rssKib / 1024);
      assertTrue(failures.isEmpty(), () -> failures.size() + " calls went wrong, first ones:\n  "
          + String.join("\n  ", failures.subList(0, Math.min(20, failures.size()))) + "\nnode log tail:\n" + node.logTail(60));
      assertEquals(3 * HOSTILE_ROUNDS * hostilePatterns().size() * 3, hostileRefused.get());
      assertEquals(450, ordinaryServed.get());
      // The heap is capped at 192 MiB; what the JVM holds beside it (code, threads, direct
      // buffers, the block cache's off-heap part) is bounded too. 1 GiB is far above a healthy
      // node here and far below the gigabytes a built program would take.
      assertTrue(rssKib < 1024 * 1024, "the node holds " + rssKib / 1024 + " MiB");
    } finally {
      pool.shutdownNow();
      for (ManagedChannel c : channels) {
        c.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  /** One hostile call and the field its refusal must name. */
  private record Hostile(String field, String rpc, MethodType type, byte[] request) {
    Status send(ManagedChannel channel) {
      try {
        if (type == MethodType.SERVER_STREAMING) {
          Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(channel, RawGrpc.method(DATA, rpc, type),
              DEADLINE, request);
          while (it.hasNext()) {
            it.next();
          }
        } else {
          ClientCalls.blockingUnaryCall(channel, RawGrpc.method(DATA, rpc, type), DEADLINE, request);
        }
        return Status.OK;
      } catch (StatusRuntimeException e) {
        return e.getStatus();
      }
    }
  }

  private static List<Hostile> hostileCalls(String pattern) {
    ByteString p = ByteString.copyFromUtf8(pattern);
    RowFilter rowKey = RowFilter.newBuilder().setRowKeyRegexFilter(p).build();
    RowFilter inChain = RowFilter.newBuilder().setChain(RowFilter.Chain.newBuilder()
        .addFilters(RowFilter.newBuilder().setFamilyNameRegexFilter(FAMILY))
        .addFilters(RowFilter.newBuilder().setCellsPerColumnLimitFilter(1))
        .addFilters(RowFilter.newBuilder().setValueRegexFilter(p))).build();
    return List.of(
        new Hostile("filter.row_key_regex_filter", "ReadRows", MethodType.SERVER_STREAMING,
            ReadRowsRequest.newBuilder().setTableName(TABLE).setFilter(rowKey).build().toByteArray()),
        new Hostile("filter.chain.filters[2].value_regex_filter", "ReadRows", MethodType.SERVER_STREAMING,
            ReadRowsRequest.newBuilder().setTableName(TABLE).setRows(RowSet.newBuilder()
                .addRowKeys(ByteString.copyFromUtf8("row-0-0"))).setFilter(inChain).build().toByteArray()),
        new Hostile("predicate_filter.column_qualifier_regex_filter", "CheckAndMutateRow", MethodType.UNARY,
            CheckAndMutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFromUtf8("cam"))
                .setPredicateFilter(RowFilter.newBuilder().setColumnQualifierRegexFilter(p))
                .addTrueMutations(set("yes")).build().toByteArray()));
  }

  private static Mutation set(String value) {
    return Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName(FAMILY)
        .setColumnQualifier(ByteString.copyFromUtf8("q")).setTimestampMicros(1000)
        .setValue(ByteString.copyFromUtf8(value))).build();
  }

  private static void write(ManagedChannel channel, String row, String value) {
    byte[] request = MutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFromUtf8(row))
        .addMutations(set(value)).build().toByteArray();
    ClientCalls.blockingUnaryCall(channel, RawGrpc.method(DATA, "MutateRow", MethodType.UNARY), DEADLINE, request);
  }

  private static List<String> read(ManagedChannel channel, String row, RowFilter filter) {
    byte[] request = ReadRowsRequest.newBuilder().setTableName(TABLE).setRows(RowSet.newBuilder()
        .addRowKeys(ByteString.copyFromUtf8(row))).setFilter(filter).build().toByteArray();
    List<String> values = new ArrayList<>();
    ClientCalls.blockingServerStreamingCall(channel, RawGrpc.method(DATA, "ReadRows", MethodType.SERVER_STREAMING),
        DEADLINE, request).forEachRemaining(bytes -> {
          try {
            ReadRowsResponse.parseFrom(bytes).getChunksList().forEach(c -> values.add(c.getValue().toStringUtf8()));
          } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
          }
        });
    return values;
  }


  private static long rssKib(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IOException("no VmRSS for process " + pid);
  }

  private static String shorten(String pattern) {
    return pattern.length() <= 60 ? pattern : pattern.substring(0, 60) + "... (" + pattern.length() + " chars)";
  }
}
