package io.tabula.cluster.conformance;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.stub.EnhancedBigtableStubSettings;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import com.google.cloud.bigtable.emulator.core.EmulatorController;
import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * One server speaking the Cloud Bigtable API on 127.0.0.1 (Google's bundled emulator or a
 * Tabula node) with an official data client and table-admin client connected to it.
 *
 * <p>Owns the server and both clients: {@link #close()} closes the clients, then stops the
 * server (and deletes a Tabula node's data folder). Every call the clients make is bounded
 * by {@link #CALL_DEADLINE} with at most {@link #MAX_ATTEMPTS} attempts, so a broken peer
 * fails a scenario instead of hanging it. Not thread-safe; one test class uses it.
 */
public final class ConformancePeer implements AutoCloseable {
  static final String PROJECT = "p";
  static final String INSTANCE = "i";
  static final String LOOPBACK = "127.0.0.1";
  /**
   * Longer than a Tabula node's own limits (tabula.node.ask-timeout and moved-retry-for, 10 s
   * each), so a node that loses a request, or waits out a tablet move, answers with its own
   * status saying what did not answer before the client gives up.
   */
  static final Duration CALL_DEADLINE = Duration.ofSeconds(15);
  static final int MAX_ATTEMPTS = 2;

  private final String name;
  private final AutoCloseable server;
  private final BigtableDataClient data;
  private final BigtableTableAdminClient admin;
  /** The Management HTTP port of the node the clients call, for a Tabula cluster; 0 otherwise. */
  private int clusterHttpPort;

  private ConformancePeer(String name, AutoCloseable server, int port) throws IOException {
    this.name = name;
    this.server = server;
    this.data = BigtableDataClient.create(dataSettings(port));
    this.admin = BigtableTableAdminClient.create(adminSettings(port));
  }

  /** Starts Google's bundled emulator on a free loopback port. */
  static ConformancePeer emulator(String name) throws IOException {
    EmulatorController emulator = EmulatorController.createBundled();
    try {
      // start() picks a free port and passes "-host" the loopback address.
      emulator.start();
    } catch (TimeoutException e) {
      throw new IOException("the bundled emulator did not open its port", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting the bundled emulator", e);
    }
    return new ConformancePeer(name, emulator::stop, emulator.getPort());
  }

  /**
   * Starts a single Tabula node on free loopback ports with its data in a fresh temporary
   * folder. Throws {@link UnsupportedOperationException} while the node is not built.
   */
  static ConformancePeer tabula(String name) throws IOException {
    Path dataDir = Files.createTempDirectory("tabula-conformance-");
    TabulaNode node;
    try {
      node = TabulaNode.start(dataDir, 0, 0);
    } catch (RuntimeException e) {
      deleteTree(dataDir);
      throw e;
    }
    AutoCloseable stop = () -> {
      try {
        node.close();
      } finally {
        deleteTree(dataDir);
      }
    };
    return new ConformancePeer(name, stop, node.grpcPort());
  }

  /**
   * Starts three Tabula nodes in this JVM, sharing one fresh temporary storage root: n1 forms
   * the cluster (and, the oldest, runs the master), n2 and n3 join it. The clients talk to n2,
   * a node that is not the master's, so most scenarios' tables are served by another node than
   * the one the client calls (each table's tablet goes where the balancer puts it), and every
   * answer crosses the cluster's forwarding.
   */
  static ConformancePeer tabulaCluster(String name) throws IOException {
    Path dataDir = Files.createTempDirectory("tabula-conformance-cluster-");
    List<TabulaNode> nodes = new ArrayList<>();
    try {
      int seedPort = freePort();
      for (String node : List.of("n1", "n2", "n3")) {
        Map<String, Object> settings = new HashMap<>(Map.of("tabula.node.data-dir", dataDir.toString(),
            // a Management HTTP port the others know: n2 forwards the views of the whole directory to n1
            "tabula.node.grpc-port", 0, "tabula.node.http-port", freePort(), "tabula.node.name", node,
            "tabula.node.cluster-port", node.equals("n1") ? seedPort : freePort()));
        if (!node.equals("n1")) {
          settings.put("tabula.node.join", List.of(LOOPBACK + ":" + seedPort));
        }
        nodes.add(TabulaNode.start(ConfigFactory.parseMap(settings)));
      }
    } catch (RuntimeException e) {
      closeAll(nodes);
      deleteTree(dataDir);
      throw e;
    }
    AutoCloseable stop = () -> {
      try {
        closeAll(nodes);
      } finally {
        deleteTree(dataDir);
      }
    };
    ConformancePeer peer = new ConformancePeer(name, stop, nodes.get(1).grpcPort());
    peer.clusterHttpPort = nodes.get(1).httpPort();
    return peer;
  }

  /**
   * For a Tabula cluster: how many tablets each node owns, as the node the clients call shows
   * them ({@code GET /tabula/tablets}); empty for a single server.
   */
  Map<String, Integer> tabletsByOwner() throws IOException, InterruptedException {
    Map<String, Integer> owners = new java.util.TreeMap<>();
    if (clusterHttpPort == 0) {
      return owners;
    }
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"owner\":\"([^\"]*)\"")
        .matcher(httpGet("/tabula/tablets"));
    while (m.find()) {
      owners.merge(m.group(1), 1, Integer::sum);
    }
    return owners;
  }

  /**
   * For a Tabula cluster: the tablets of {@code table} as the node the clients call lists them
   * (owner, state, a move's other node), one JSON object each; empty for a single server.
   */
  String tabletsOf(String table) throws IOException, InterruptedException {
    if (clusterHttpPort == 0) {
      return "";
    }
    return httpGet("/tabula/tablets?table=" + table);
  }

  /** The body of a GET of {@code path} on the called node's Management HTTP port. */
  private String httpGet(String path) throws IOException, InterruptedException {
    return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
        java.net.URI.create("http://" + LOOPBACK + ":" + clusterHttpPort + path)).timeout(CALL_DEADLINE).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
  }

  /** Stops the nodes, youngest first, so the master's node goes last. */
  private static void closeAll(List<TabulaNode> nodes) {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
  }

  private static int freePort() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(LOOPBACK))) {
      return s.getLocalPort();
    }
  }

  String name() {
    return name;
  }

  BigtableDataClient data() {
    return data;
  }

  BigtableTableAdminClient admin() {
    return admin;
  }

  @Override
  public void close() throws Exception {
    try (AutoCloseable s = server) {
      try (BigtableDataClient d = data) {
        admin.close();
      }
    }
  }

  private static RetrySettings bounded() {
    return RetrySettings.newBuilder()
        .setMaxAttempts(MAX_ATTEMPTS)
        .setInitialRetryDelayDuration(Duration.ofMillis(20))
        .setMaxRetryDelayDuration(Duration.ofMillis(200))
        .setRetryDelayMultiplier(2.0)
        .setInitialRpcTimeoutDuration(CALL_DEADLINE)
        .setMaxRpcTimeoutDuration(CALL_DEADLINE)
        .setRpcTimeoutMultiplier(1.0)
        .setTotalTimeoutDuration(CALL_DEADLINE)
        .build();
  }

  public static BigtableDataSettings dataSettings(int port) throws IOException {
    BigtableDataSettings.Builder builder =
        BigtableDataSettings.newBuilderForEmulator(LOOPBACK, port)
            .setProjectId(PROJECT)
            .setInstanceId(INSTANCE)
            .setMetricsProvider(NoopMetricsProvider.INSTANCE)
            .disableInternalMetrics();
    EnhancedBigtableStubSettings.Builder stub = builder.stubSettings();
    RetrySettings retry = bounded();
    stub.readRowsSettings().setRetrySettings(retry).setIdleTimeoutDuration(CALL_DEADLINE);
    stub.readRowSettings().setRetrySettings(retry);
    stub.sampleRowKeysSettings().setRetrySettings(retry);
    stub.mutateRowSettings().setRetrySettings(retry);
    stub.bulkMutateRowsSettings().setRetrySettings(retry);
    stub.checkAndMutateRowSettings().setRetrySettings(retry);
    stub.readModifyWriteRowSettings().setRetrySettings(retry);
    return builder.build();
  }

  public static BigtableTableAdminSettings adminSettings(int port) throws IOException {
    BigtableTableAdminSettings.Builder builder =
        BigtableTableAdminSettings.newBuilderForEmulator(LOOPBACK, port)
            .setProjectId(PROJECT)
            .setInstanceId(INSTANCE);
    RetrySettings retry = bounded();
    builder.stubSettings().applyToAllUnaryMethods(settings -> {
      settings.setRetrySettings(retry);
      return null;
    });
    return builder.build();
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.delete(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }
}
