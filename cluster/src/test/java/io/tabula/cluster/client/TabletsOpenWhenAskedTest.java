package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.SampleRowKeysRequest;
import com.google.bigtable.v2.SampleRowKeysResponse;
import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tabula.client.GcPolicy;
import io.tabula.client.Query;
import io.tabula.client.RetrySettings;
import io.tabula.client.RowMutation;
import io.tabula.cluster.RawGrpc;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tablet opens at its first request, not when it is placed (docs/cluster.md, "Tablets open
 * when first asked"): a table of many initial splits costs its node no opening, the node is
 * ready at once, and a scan, {@code SampleRowKeys} and {@code DropRowRange} over the table pass
 * the tablets never opened by without opening them (a tablet without a manifest holds no
 * row). A write opens its tablet, which then serves it, is scanned, and is opened again after
 * a restart. Counts the tablets' folders on disk: a tablet that opens publishes its manifest
 * there.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TabletsOpenWhenAskedTest {
  private static final int SPLITS = 400;

  @TempDir
  Path dir;

  @Test
  void aLargeTableOpensOnlyTheTabletsAskedForAndScansWhole() throws Exception {
    Map<String, Object> settings = Map.of("tabula.node.warm-up", "0s");
    List<byte[]> splits = new ArrayList<>();
    for (int i = 1; i <= SPLITS; i++) {
      splits.add(String.format("r%05d", i * 10).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    String middle = String.format("r%05d", SPLITS * 10 / 2 + 5);
    try (InJvmNode node = InJvmNode.start(dir, RetrySettings.DEFAULT, settings)) {
      node.client.admin().createTable("big", Map.of("f", GcPolicy.maxVersions(1)), splits)
          .toCompletableFuture().join();
      awaitReady(node);
      Thread.sleep(1_000); // a node that opened every placed tablet would have begun by now
      assertEquals(0, openedTablets(), "no tablet of the new table opened before it was asked for");

      assertEquals(List.of(), node.client.readRows(Query.table("big")).toCompletableFuture().join(),
          "a full scan of the empty table");
      assertEquals(SPLITS + 1, sampleRowKeys(node).size(), "SampleRowKeys answers one key per tablet");
      node.client.admin().dropRowsWithPrefix("big", ByteString.copyFromUtf8("r001")).toCompletableFuture().join();
      assertEquals(0, openedTablets(), "the scan, the samples and the drop opened no tablet");

      node.client.apply("big", RowMutation.create(middle).setCell("f", "q", "v")).toCompletableFuture().join();
      assertTrue(node.client.readRow("big", middle).toCompletableFuture().join().isPresent(),
          "the row written reads back");
      assertEquals(1, node.client.readRows(Query.table("big")).toCompletableFuture().join().size(),
          "the scan finds the row of the one tablet opened");
      assertEquals(1, openedTablets(), "the write opened its tablet only");
    }

    try (InJvmNode node = InJvmNode.start(dir, RetrySettings.DEFAULT, settings)) {
      awaitReady(node);
      assertTrue(node.client.readRow("big", middle).toCompletableFuture().join().isPresent(),
          "the row reads back after a restart");
      assertEquals(1, node.client.readRows(Query.table("big")).toCompletableFuture().join().size(),
          "the scan after a restart finds it");
      assertEquals(1, openedTablets(), "the restart opened no other tablet");
    }
  }

  /** The tablets of table "big" with a folder on disk: the ones that ever opened. */
  private long openedTablets() throws java.io.IOException {
    Path table = dir.resolve("tables").resolve("big");
    if (!Files.exists(table)) {
      return 0;
    }
    try (Stream<Path> s = Files.list(table)) {
      return s.filter(Files::isDirectory).count();
    }
  }

  private static List<SampleRowKeysResponse> sampleRowKeys(InJvmNode node) {
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", node.node.grpcPort()).usePlaintext().build();
    try {
      byte[] req = SampleRowKeysRequest.newBuilder()
          .setTableName("projects/tabula/instances/tabula/tables/big").build().toByteArray();
      List<SampleRowKeysResponse> out = new ArrayList<>();
      io.grpc.stub.ClientCalls.blockingServerStreamingCall(channel, RawGrpc.method("google.bigtable.v2.Bigtable",
          "SampleRowKeys", MethodType.SERVER_STREAMING), CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS),
          req).forEachRemaining(bytes -> {
            try {
              out.add(SampleRowKeysResponse.parseFrom(bytes));
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
              throw new AssertionError(e);
            }
          });
      return out;
    } finally {
      channel.shutdownNow();
    }
  }

  private static void awaitReady(InJvmNode node) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
          + node.node.httpPort() + "/ready")).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 200) {
        return;
      }
      assertTrue(System.nanoTime() < deadline, "the node was not ready within 60 s: " + r.body());
      Thread.sleep(100);
    }
  }
}
