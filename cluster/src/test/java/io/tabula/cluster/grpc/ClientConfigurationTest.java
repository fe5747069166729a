package io.tabula.cluster.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.cloud.bigtable.data.v2.stub.EnhancedBigtableStubSettings;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official Java data client built the way an application builds it for a custom endpoint
 * without TLS (production settings, not the emulator's: sessions left on, so the client asks
 * {@code GetClientConfiguration} first). The node answers that call with sessions off, never
 * failing it (the client would retry and warn), the client logs no warning and makes no call
 * the node does not serve, and its reads and writes work.
 */
class ClientConfigurationTest {
  @TempDir
  Path dir;

  @Test
  void aClientForACustomEndpointGetsItsConfigurationOnceAndWarnsOfNothing() throws Exception {
    List<LogRecord> warnings = new ArrayList<>();
    Logger clientLogs = Logger.getLogger("com.google.cloud.bigtable");
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
          synchronized (warnings) {
            warnings.add(r);
          }
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    clientLogs.addHandler(capture);
    try (TabulaNode node = TabulaNode.start(dir, 0, 0)) {
      String endpoint = "127.0.0.1:" + node.grpcPort();
      BigtableTableAdminSettings.Builder adminSettings = BigtableTableAdminSettings.newBuilder().setProjectId("p")
          .setInstanceId("i");
      adminSettings.stubSettings().setEndpoint(endpoint).setTransportChannelProvider(plaintext())
          .setCredentialsProvider(NoCredentialsProvider.create());
      try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(adminSettings.build())) {
        admin.createTable(CreateTableRequest.of("t").addFamily("cf"));
      }
      BigtableDataSettings.Builder data = BigtableDataSettings.newBuilder().setProjectId("p").setInstanceId("i")
          .setCredentialsProvider(NoCredentialsProvider.create())
          // the client would export its metrics to Cloud Monitoring: traffic stays on loopback
          .setMetricsProvider(NoopMetricsProvider.INSTANCE)
          .disableInternalMetrics();
      data.stubSettings().setEndpoint(endpoint).setTransportChannelProvider(plaintext())
          .setDirectPathConfig(EnhancedBigtableStubSettings.DirectPathConfig.FORCED_OFF);
      try (BigtableDataClient client = BigtableDataClient.create(data.build())) {
        client.mutateRow(RowMutation.create(TableId.of("t"), "r1").setCell("cf", "q", "v1"));
        Row row = client.readRow(TableId.of("t"), "r1");
        assertEquals("v1", row.getCells("cf", "q").get(0).getValue().toStringUtf8());
      }
      String metrics = get("http://127.0.0.1:" + node.httpPort() + "/metrics");
      // Answered, and never retried: no call of it failed (the client asks from two places as it starts).
      assertTrue(calls(metrics, "GetClientConfiguration", "OK") >= 1, metrics);
      assertEquals(0, calls(metrics, "GetClientConfiguration", "(?!OK\")[A-Z_]+"), metrics);
      assertEquals(0, calls(metrics, "[A-Za-z]+", "UNIMPLEMENTED"), "a call the node does not serve:\n" + metrics);
    } finally {
      clientLogs.removeHandler(capture);
    }
    synchronized (warnings) {
      StringBuilder seen = new StringBuilder();
      warnings.forEach(r -> seen.append(r.getLoggerName()).append(": ").append(r.getMessage()).append(' ')
          .append(r.getThrown()).append('\n'));
      assertTrue(warnings.isEmpty(), "the client warned:\n" + seen);
    }
  }

  private static InstantiatingGrpcChannelProvider plaintext() {
    return InstantiatingGrpcChannelProvider.newBuilder().setChannelConfigurator(b -> b.usePlaintext()).build();
  }

  /** The calls of methods matching {@code method} answered with a code matching {@code code}, from the node's histogram. */
  private static long calls(String metrics, String method, String code) {
    Matcher m = Pattern.compile("tabula_grpc_requests_seconds_count\\{[^}]*\\}").matcher(metrics);
    long n = 0;
    while (m.find()) {
      String labels = m.group();
      if (labels.matches(".*method=\"" + method + "\".*") && labels.matches(".*code=\"" + code + "\".*")) {
        String rest = metrics.substring(m.end()).trim();
        n += (long) Double.parseDouble(rest.substring(0, rest.indexOf('\n')).trim());
      }
    }
    return n;
  }

  private static String get(String uri) throws IOException, InterruptedException {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(uri)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }
}
