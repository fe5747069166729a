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
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;

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
  private final Server server;
  private final BigtableDataClient data;
  private final BigtableTableAdminClient admin;
  /** Management HTTP of the node the clients call, for a Tabula cluster; null otherwise. */
  private final ManagementView management;

  /** What stops a peer's server (and deletes its files). */
  private interface Server extends AutoCloseable {
    @Override
    void close() throws IOException;
  }

  /** Owns {@code server}; the caller stops it if this fails ({@link #stoppedOnFailure}). */
  private ConformancePeer(String name, Server server, BigtableDataSettings data,
      BigtableTableAdminSettings admin, ManagementView management) throws IOException {
    this.name = name;
    this.server = server;
    this.management = management;
    this.data = BigtableDataClient.create(data);
    try {
      this.admin = BigtableTableAdminClient.create(admin);
    } catch (IOException | RuntimeException e) {
      this.data.close();
      throw e;
    }
  }

  /** What makes a peer of a started server. */
  @FunctionalInterface
  private interface PeerOf {
    ConformancePeer make() throws IOException;
  }

  /** The peer {@code peer} makes; if that fails, {@code server} is stopped. */
  private static ConformancePeer stoppedOnFailure(Server server, PeerOf peer) throws IOException {
    try {
      return peer.make();
    } catch (IOException | RuntimeException e) {
      try {
        server.close();
      } catch (IOException | RuntimeException stopping) {
        e.addSuppressed(stopping);
      }
      throw e;
    }
  }

  /** A peer of a server on {@code port} with clients as an emulator's; stops the server if they cannot be made. */
  private static ConformancePeer plain(String name, Server server, int port, ManagementView management)
      throws IOException {
    return stoppedOnFailure(server, () -> new ConformancePeer(name, server, dataSettings(port), adminSettings(port),
        management));
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
    return plain(name, emulator::stop, emulator.getPort(), null);
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
    Server stop = () -> {
      try {
        node.close();
      } finally {
        deleteTree(dataDir);
      }
    };
    return plain(name, stop, node.grpcPort(), null);
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
    List<TabulaNode> nodes = startNodes(dataDir, node -> Map.of());
    TabulaNode called = nodes.get(1);
    return plain(name, stopping(nodes, dataDir), called.grpcPort(), new ManagementView(
        URI.create("http://" + LOOPBACK + ":" + called.httpPort()), HttpClient.newHttpClient(), null));
  }

  /**
   * As {@link #tabulaCluster}, with security ({@link SecureCluster}): every node serves TLS
   * with its own certificate of one CA, Artery runs over mutual TLS with that CA as the
   * cluster's, and calls are authenticated. The data client calls n2 with a service account's
   * key, the admin client with a static admin token, both over TLS trusting the CA, with the
   * same deadlines and attempts as the other peers.
   */
  static ConformancePeer secureTabulaCluster(String name) throws IOException {
    SecureNodes cluster = SecureNodes.start();
    SecureCluster security = cluster.security();
    TabulaNode called = cluster.called();
    return stoppedOnFailure(cluster.stop, () -> new ConformancePeer(name, cluster.stop,
        bounded(security.data(called.grpcPort())), bounded(security.admin(called.grpcPort())),
        security.management(called.httpPort())));
  }

  /**
   * The three nodes of a secured cluster, as {@link #secureTabulaCluster} starts them, for
   * clients other than the Java ones (the Node client): {@link #called()} is n2, a node other
   * than the master's. Closing stops the nodes and deletes their files.
   */
  static final class SecureNodes implements AutoCloseable {
    private final SecureCluster security;
    private final List<TabulaNode> nodes;
    private final Server stop;

    private SecureNodes(SecureCluster security, List<TabulaNode> nodes, Server stop) {
      this.security = security;
      this.nodes = nodes;
      this.stop = stop;
    }

    /** Starts n1, n2 and n3 over a fresh temporary folder (certificates, auth file, storage root). */
    static SecureNodes start() throws IOException {
      Path dataDir = Files.createTempDirectory("tabula-conformance-secure-cluster-");
      SecureCluster security;
      List<TabulaNode> nodes;
      try {
        security = SecureCluster.write(Files.createDirectories(dataDir.resolve("security")), NODES);
        nodes = startNodes(dataDir.resolve("data"), security::nodeSettings);
      } catch (IOException | RuntimeException e) {
        deleteTree(dataDir);
        throw e;
      }
      return new SecureNodes(security, nodes, stopping(nodes, dataDir));
    }

    SecureCluster security() {
      return security;
    }

    /** The node clients call: n2. */
    TabulaNode called() {
      return nodes.get(1);
    }

    /**
     * A node that owns no tablet of {@code table}, as n2's Management HTTP lists them over
     * HTTPS (forwarded to the master's node), so that a client calling it crosses the cluster.
     */
    TabulaNode notOwning(String table) throws IOException, InterruptedException {
      java.util.Set<String> owners = security.management(called().httpPort()).ownersOf(table);
      if (owners.isEmpty()) {
        throw new IOException("no node owns a tablet of " + table);
      }
      for (TabulaNode node : nodes) {
        if (!owners.contains(node.settings().name())) {
          return node;
        }
      }
      throw new IOException("every node owns a tablet of " + table + ": " + owners);
    }

    @Override
    public void close() throws IOException {
      stop.close();
    }
  }

  private static final List<String> NODES = List.of("n1", "n2", "n3");

  /**
   * Starts {@link #NODES} over {@code dataDir}, n1 first, each with {@code extra}'s settings
   * for it; if one fails, stops those started and deletes {@code dataDir}.
   */
  private static List<TabulaNode> startNodes(Path dataDir, Function<String, Map<String, Object>> extra)
      throws IOException {
    List<TabulaNode> nodes = new ArrayList<>();
    try {
      int seedPort = freePort();
      for (String node : NODES) {
        Map<String, Object> settings = new HashMap<>(Map.of("tabula.node.data-dir", dataDir.toString(),
            // a Management HTTP port the others know: n2 forwards the views of the whole directory to n1
            "tabula.node.grpc-port", 0, "tabula.node.http-port", freePort(), "tabula.node.name", node,
            "tabula.node.cluster-port", node.equals("n1") ? seedPort : freePort()));
        if (!node.equals("n1")) {
          settings.put("tabula.node.join", List.of(LOOPBACK + ":" + seedPort));
        }
        settings.putAll(extra.apply(node));
        nodes.add(TabulaNode.start(ConfigFactory.parseMap(settings)));
      }
    } catch (IOException | RuntimeException e) {
      closeAll(nodes);
      deleteTree(dataDir);
      throw e;
    }
    return nodes;
  }

  /** Stops {@code nodes}, then deletes {@code dataDir}. */
  private static Server stopping(List<TabulaNode> nodes, Path dataDir) {
    return () -> {
      try {
        closeAll(nodes);
      } finally {
        deleteTree(dataDir);
      }
    };
  }

  /**
   * For a Tabula cluster: how many tablets each node owns, as the node the clients call shows
   * them ({@code GET /tabula/tablets}); empty for a single server.
   */
  Map<String, Integer> tabletsByOwner() throws IOException, InterruptedException {
    return management == null ? Map.of() : management.tabletsByOwner();
  }

  /**
   * For a Tabula cluster: the tablets of {@code table} as the node the clients call lists them
   * (owner, state, a move's other node), one JSON object each; empty for a single server.
   */
  String tabletsOf(String table) throws IOException, InterruptedException {
    return management == null ? "" : management.tabletsOf(table);
  }

  /**
   * Stops the nodes, youngest first, so the master's node goes last. Each is waited for until it
   * has left the cluster and closed its storage (its coordinated shutdown reached the phase that
   * terminates its actor system), then all until their actor systems have terminated, within
   * {@link #STOP_WITHIN}. Not each in turn: a node whose Artery runs over TLS may go on
   * terminating until its peers close their connections to it (Pekko 1.2.1's TLS streams end
   * only when the other side closes), so a wait for each in turn could last a minute per node.
   */
  private static void closeAll(List<TabulaNode> nodes) {
    long deadline = System.nanoTime() + STOP_WITHIN.toNanos();
    for (int i = nodes.size() - 1; i >= 0; i--) {
      ActorSystem<?> system = nodes.get(i).system();
      CompletableFuture<Done> lastPhase = new CompletableFuture<>();
      CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseActorSystemTerminate(), "test-node-stopping",
          () -> {
            lastPhase.complete(Done.getInstance());
            return lastPhase;
          });
      system.terminate();
      await(lastPhase, deadline, "the node's coordinated shutdown");
    }
    for (TabulaNode node : nodes) {
      await(node.system().getWhenTerminated().toCompletableFuture(), deadline, "the node's actor system");
    }
  }

  private static final Duration STOP_WITHIN = Duration.ofSeconds(90);

  /** Waits for {@code done} until {@code deadline} ({@link System#nanoTime}); logs what did not end in time. */
  private static void await(CompletableFuture<?> done, long deadline, String what) {
    try {
      done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      System.out.println(what + " did not end within " + STOP_WITHIN + ": " + e);
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
    try (Server s = server) {
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
    return bounded(BigtableDataSettings.newBuilderForEmulator(LOOPBACK, port)
        .setProjectId(PROJECT)
        .setInstanceId(INSTANCE)
        .setMetricsProvider(NoopMetricsProvider.INSTANCE)
        .disableInternalMetrics());
  }

  /** {@code builder}'s settings with every call the scenarios make bounded by {@link #bounded()}. */
  static BigtableDataSettings bounded(BigtableDataSettings.Builder builder) {
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
    return bounded(BigtableTableAdminSettings.newBuilderForEmulator(LOOPBACK, port)
        .setProjectId(PROJECT)
        .setInstanceId(INSTANCE));
  }

  /** {@code builder}'s settings with every unary call bounded by {@link #bounded()}. */
  static BigtableTableAdminSettings bounded(BigtableTableAdminSettings.Builder builder) throws IOException {
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
