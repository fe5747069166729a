package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.stub.EnhancedBigtableStubSettings;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import com.google.protobuf.ByteString;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The nodes of one scenario on one fresh storage root: started in order (the first forms
 * the cluster, the others join it), every one stopped at the end whatever happened, and each
 * node's log tail printed when the scenario failed. Official clients built here stay on
 * loopback ({@code newBuilderForEmulator}).
 */
final class ClusterFixture implements AutoCloseable {
  static final String PROJECT = "p";
  static final String INSTANCE = "i";
  private static final Pattern TABLET = Pattern.compile("\"id\":\"([^\"]+)\".*?\"owner\":\"([^\"]*)\",\"state\":\"([a-z]+)\"");

  private static final Pattern RANGE = Pattern.compile(
      "\"id\":\"([^\"]+)\",\"start\":\"((?:[^\"\\\\]|\\\\.)*)\",\"end\":\"((?:[^\"\\\\]|\\\\.)*)\"");

  final Path root;
  final Path data;
  /** Every node process started, in order; safe to read while a scenario starts more. */
  final List<NodeJvm> nodes = new java.util.concurrent.CopyOnWriteArrayList<>();

  /**
   * A fixture on a fresh temporary root, which outlives {@link #close} (that only stops the
   * nodes) so a failed scenario's logs can still be printed; {@link LogsOnFailure} deletes it.
   */
  ClusterFixture() throws IOException {
    this.root = Files.createTempDirectory("tabula-cluster-");
    this.data = Files.createDirectories(root.resolve("data"));
    current = this;
  }

  /** The heap ({@code -Xmx}) of every node started from now on. */
  String heap = "256m";

  /** The extra {@code tabula server} flags of each node started from now on, by its name ({@code --tls-cert ...}). */
  java.util.function.Function<String, List<String>> flags = name -> List.of();

  /** HOCON every node started from now on is given ({@code --config}); null: none. */
  private Path config;

  /** Gives the nodes started from now on this configuration (HOCON) over the defaults. */
  void configure(String hocon) throws IOException {
    config = Files.writeString(root.resolve("node.conf"), hocon);
  }

  /**
   * Starts node {@code name}, joining the first node (if any), and waits until it is ready.
   * Its ports are picked free just before, and another process (another node's H2 journal
   * server, say) may take one first: a node that exits because a port was taken is started
   * again on other ports, up to three times.
   */
  NodeJvm add(String name) throws IOException, InterruptedException {
    return start(name, nodes.isEmpty() ? null : nodes.get(0), config, Duration.ofSeconds(90));
  }

  /**
   * Starts node {@code name} joining {@code seed} (null: it forms the cluster), with
   * configuration {@code conf} (null: none), and waits up to {@code ready} until it is ready;
   * retried on other ports as {@link #add} says. The node is added to {@link #nodes} as soon as
   * its process starts, so {@link #close} stops it.
   */
  NodeJvm start(String name, NodeJvm seed, Path conf, Duration ready) throws IOException, InterruptedException {
    for (int attempt = 1; ; attempt++) {
      NodeJvm n = NodeJvm.start(name, data, seed, root, conf, heap, flags.apply(name));
      nodes.add(n);
      try {
        n.awaitReady(ready);
        return n;
      } catch (IllegalStateException e) {
        if (attempt >= 3 || n.alive() || !n.tail(400).contains("Address already in use")) {
          throw e;
        }
        nodes.remove(n);
        n.close();
        Files.move(n.log, n.log.resolveSibling(n.log.getFileName().toString().replace(".log", "") + "-port-taken-"
            + attempt + ".log"));
        System.out.println(name + ": a port was taken before it bound; starting it again on other ports");
        Thread.sleep(2_000);
      }
    }
  }

  /** Writes {@code hocon} to {@code fileName} under the root, for {@link #start}; returns its path. */
  Path config(String fileName, String hocon) throws IOException {
    return Files.writeString(root.resolve(fileName), hocon);
  }

  /**
   * Starts node {@code name} over the storage root {@code data} (the scenario's own root, or
   * another), joining the first node, without waiting for it to be ready: it may be refused.
   */
  NodeJvm start(String name, Path data) throws IOException {
    NodeJvm n = NodeJvm.start(name, data, nodes.isEmpty() ? null : nodes.get(0), root, config, heap,
        flags.apply(name));
    nodes.add(n);
    return n;
  }

  NodeJvm node(String name) {
    return nodes.stream().filter(n -> n.name.equals(name)).findFirst().orElseThrow();
  }

  /** Asserts that {@code n}, the oldest node, started the master's singleton. */
  static void assertRunsMaster(NodeJvm n) {
    assertTrue(n.logContains("Singleton manager starting singleton actor "
        + "[pekko://tabula/system/singletonManagermaster/master]"), n.name + ", the oldest, runs the master");
  }

  /** The status and body of {@code via}'s answer to {@code path}, for a failure's message. */
  static String body(NodeJvm via, String path) {
    try {
      var r = via.get(path);
      return r.statusCode() + " " + r.body();
    } catch (IOException | InterruptedException e) {
      return "no answer: " + e;
    }
  }

  /** Tablet id to {owner, state}, in row order, as {@code via}'s {@code /tabula/tablets?table=} shows them. */
  static Map<String, String[]> tablets(NodeJvm via, String table) throws IOException, InterruptedException {
    String body = via.get("/tabula/tablets?table=" + table).body();
    Map<String, String[]> out = new LinkedHashMap<>();
    for (String t : body.split("\\},\\{")) {
      Matcher m = TABLET.matcher(t);
      if (m.find()) {
        out.put(m.group(1), new String[] {m.group(2), m.group(3)});
      }
    }
    return out;
  }

  /**
   * The row ranges of {@code table}'s tablets as {@code via} shows them, in row order: {id,
   * start, end}, each bound as the node prints it (a quoted string, or 0x and hex).
   */
  static List<String[]> ranges(NodeJvm via, String table) throws IOException, InterruptedException {
    String body = via.get("/tabula/tablets?table=" + table).body();
    List<String[]> out = new ArrayList<>();
    for (String t : body.split("\\},\\{")) {
      Matcher m = RANGE.matcher(t);
      if (m.find()) {
        out.add(new String[] {m.group(1), m.group(2), m.group(3)});
      }
    }
    return out;
  }

  static BigtableDataClient data(NodeJvm n) throws IOException {
    return data(n, Duration.ofSeconds(10), 20, Duration.ofSeconds(30));
  }

  /** A client whose calls are tried once, for at most {@code deadline}: for probing whether a row serves. */
  static BigtableDataClient data(NodeJvm n, Duration deadline) throws IOException {
    return data(n, deadline, 1, deadline);
  }

  static BigtableDataClient data(NodeJvm n, Duration attempt, int attempts, Duration total)
      throws IOException {
    BigtableDataSettings.Builder b = BigtableDataSettings.newBuilderForEmulator(NodeJvm.HOST, n.grpcPort)
        .setProjectId(PROJECT).setInstanceId(INSTANCE).setMetricsProvider(NoopMetricsProvider.INSTANCE)
        .disableInternalMetrics();
    EnhancedBigtableStubSettings.Builder stub = b.stubSettings();
    RetrySettings retry = RetrySettings.newBuilder().setMaxAttempts(attempts)
        .setInitialRetryDelayDuration(Duration.ofMillis(20)).setMaxRetryDelayDuration(Duration.ofMillis(500))
        .setRetryDelayMultiplier(2.0).setInitialRpcTimeoutDuration(attempt)
        .setMaxRpcTimeoutDuration(attempt).setRpcTimeoutMultiplier(1.0)
        .setTotalTimeoutDuration(total).build();
    stub.readRowsSettings().setRetrySettings(retry).setIdleTimeoutDuration(Duration.ofSeconds(30));
    stub.readRowSettings().setRetrySettings(retry);
    stub.mutateRowSettings().setRetrySettings(retry);
    stub.bulkMutateRowsSettings().setRetrySettings(retry);
    return BigtableDataClient.create(b.build());
  }

  /** Creates {@code table} with the one family "f" and tablets split at {@code splits}, through {@code via}. */
  static void createTable(NodeJvm via, String table, List<String> splits) throws IOException {
    try (BigtableTableAdminClient admin = admin(via)) {
      CreateTableRequest create = CreateTableRequest.of(table).addFamily("f");
      splits.forEach(s -> create.addSplit(ByteString.copyFromUtf8(s)));
      admin.createTable(create);
    }
  }

  static BigtableTableAdminClient admin(NodeJvm n) throws IOException {
    return BigtableTableAdminClient.create(BigtableTableAdminSettings.newBuilderForEmulator(NodeJvm.HOST, n.grpcPort)
        .setProjectId(PROJECT).setInstanceId(INSTANCE).build());
  }

  /** Prints every node's log tail (for a failed scenario). */
  void printLogs() {
    for (NodeJvm n : nodes) {
      System.out.println("===== last lines of node " + n.name + " (" + n.log + ") =====");
      System.out.println(n.tail(120));
    }
  }

  /** Services the nodes use (HDFS, PostgreSQL), closed after every node has stopped, newest first. */
  private final List<AutoCloseable> services = new ArrayList<>();

  /** Keeps {@code service} running until the nodes have stopped ({@link #close}); returns it. */
  <T extends AutoCloseable> T service(T service) {
    services.add(0, service);
    return service;
  }

  @Override
  public void close() throws InterruptedException {
    for (NodeJvm n : nodes) {
      n.close();
    }
    for (AutoCloseable s : services) {
      try {
        s.close();
      } catch (Exception e) {
        System.out.println("stopping " + s + " failed: " + e);
      }
    }
    services.clear();
  }

  /** Prints the nodes' logs when a scenario fails, then deletes the scenario's root either way. */
  static final class LogsOnFailure implements TestWatcher {
    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
      ClusterFixture f = current;
      if (f != null) {
        f.printLogs();
      }
      deleteRoot();
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
      deleteRoot();
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
      deleteRoot();
    }

    /** Deletes the scenario's root, unless {@code -Dtabula.keep-root=true} asks to keep it (with every node's whole log). */
    private static void deleteRoot() {
      ClusterFixture f = current;
      current = null;
      if (f == null) {
        return;
      }
      if (Boolean.getBoolean("tabula.keep-root")) {
        System.out.println("kept the scenario's root, with every node's whole log: " + f.root);
        return;
      }
      try (java.util.stream.Stream<Path> paths = Files.walk(f.root)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        System.out.println("could not delete " + f.root + ": " + e);
      }
    }
  }

  /** The fixture of the scenario running now (scenarios run one at a time). */
  static volatile ClusterFixture current;
}
