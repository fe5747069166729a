package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.rpc.NotFoundException;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import com.typesafe.config.ConfigFactory;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's {@code GET /metrics} after known traffic from the official client: gRPC calls
 * counted by method and status code (a refused call as its code, an unknown method as
 * {@code method="other"}), rows and bytes per table, the commit log's groups and syncs, the
 * memtables, the JVM; in Prometheus's text format.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MetricsTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir
  Path dir;

  @Test
  void metricsCountWhatTheNodeDid() throws Exception {
    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(),
        "tabula.node.grpc-port", 0, "tabula.node.http-port", 0, "tabula.node.durability", "fsync")))) {
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(BigtableTableAdminSettings
          .newBuilderForEmulator("127.0.0.1", node.grpcPort()).setProjectId("p").setInstanceId("i").build());
          BigtableDataClient data = BigtableDataClient.create(BigtableDataSettings
              .newBuilderForEmulator("127.0.0.1", node.grpcPort()).setProjectId("p").setInstanceId("i")
              .setMetricsProvider(NoopMetricsProvider.INSTANCE).disableInternalMetrics().build())) {
        admin.createTable(CreateTableRequest.of("t").addFamily("f"));
        for (int i = 0; i < 10; i++) {
          data.mutateRow(RowMutation.create(TableId.of("t"), "row" + i).setCell("f", "q", "value-" + i));
        }
        for (int i = 0; i < 3; i++) {
          data.readRow(TableId.of("t"), "row" + i);
        }
        assertThrows(NotFoundException.class, () -> data.mutateRow(RowMutation.create(TableId.of("absent"), "r")
            .setCell("f", "q", "v")));
      }
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", node.grpcPort()).usePlaintext().build();
      try {
        MethodDescriptor<byte[], byte[]> unknown = RawGrpc.method("google.bigtable.v2.Bigtable", "NoSuchMethod",
            MethodDescriptor.MethodType.UNARY);
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(
            channel, unknown, io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[0]));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
      } finally {
        channel.shutdownNow();
      }

      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort()
          + "/metrics")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode());
      assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
      String m = r.body();
      assertEquals(10, value(m, "tabula_grpc_requests_seconds_count{code=\"OK\",method=\"MutateRow\"}"));
      assertEquals(3, value(m, "tabula_grpc_requests_seconds_count{code=\"OK\",method=\"ReadRows\"}"));
      assertEquals(1, value(m, "tabula_grpc_requests_seconds_count{code=\"NOT_FOUND\",method=\"MutateRow\"}"));
      assertEquals(1, value(m, "tabula_grpc_requests_seconds_count{code=\"OK\",method=\"CreateTable\"}"));
      assertEquals(1, value(m, "tabula_grpc_requests_seconds_count{code=\"UNIMPLEMENTED\",method=\"other\"}"));
      assertTrue(m.contains("tabula_grpc_requests_seconds_bucket{code=\"OK\",method=\"MutateRow\",le=\"0.001\"}"),
          "latency histograms have buckets");
      assertEquals(10, value(m, "tabula_table_rows_written_total{table=\"t\"}"));
      assertEquals(3, value(m, "tabula_table_rows_read_total{table=\"t\"}"));
      assertTrue(value(m, "tabula_table_written_bytes_total{table=\"t\"}") >= 10 * "value-0".length());
      assertTrue(value(m, "tabula_table_read_bytes_total{table=\"t\"}") >= 3 * "value-0".length());
      assertEquals(10, value(m, "tabula_commitlog_records_total"));
      assertTrue(value(m, "tabula_commitlog_syncs_seconds_count") >= 1, "fsync durability syncs the log");
      assertTrue(value(m, "tabula_memtables_size_bytes") > 0);
      assertEquals(1, value(m, "tabula_tablets"));
      double lookups = value(m, "tabula_location_lookups_total");
      assertTrue(lookups >= 1 && lookups <= 2, "thirteen calls on a table of one tablet looked it up once or twice: "
          + lookups);
      assertEquals(1, value(m, "tabula_location_cache_tablets"), "the one tablet of t is cached");
      assertTrue(m.contains("jvm_memory_used_bytes{area=\"heap\""), "JVM metrics are there");
      assertTrue(m.contains("jvm_gc_"), "GC metrics are there");

      // An operator may pause the timing of calls, and resume it.
      assertEquals(200, post(node, "/metrics/recording?on=false").statusCode());
      try (BigtableDataClient data = BigtableDataClient.create(BigtableDataSettings
          .newBuilderForEmulator("127.0.0.1", node.grpcPort()).setProjectId("p").setInstanceId("i")
          .setMetricsProvider(NoopMetricsProvider.INSTANCE).disableInternalMetrics().build())) {
        data.mutateRow(RowMutation.create(TableId.of("t"), "paused").setCell("f", "q", "v"));
        assertEquals(200, post(node, "/metrics/recording?on=true").statusCode());
        data.mutateRow(RowMutation.create(TableId.of("t"), "resumed").setCell("f", "q", "v"));
      }
      String after = scrape(node);
      assertEquals(11, value(after, "tabula_grpc_requests_seconds_count{code=\"OK\",method=\"MutateRow\"}"),
          "the call made while paused is not timed");
      assertEquals(12, value(after, "tabula_table_rows_written_total{table=\"t\"}"), "rows are counted either way");
      HttpResponse<String> bad = post(node, "/metrics/recording?on=maybe");
      assertEquals(400, bad.statusCode());
      assertTrue(bad.body().contains("on: must be true or false"), bad.body());
    }
  }

  private static String scrape(TabulaNode node) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + "/metrics"))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  private static HttpResponse<String> post(TabulaNode node, String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
        .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The value of the first sample whose line starts with {@code prefix}. */
  private static double value(String metrics, String prefix) {
    Matcher m = Pattern.compile("^" + Pattern.quote(prefix) + "\\S* (\\S+)$", Pattern.MULTILINE).matcher(metrics);
    if (!m.find()) {
      throw new AssertionError("no sample " + prefix + " in:\n" + metrics);
    }
    return Double.parseDouble(m.group(1));
  }
}
