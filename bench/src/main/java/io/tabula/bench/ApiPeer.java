package io.tabula.bench;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import com.google.cloud.bigtable.emulator.core.EmulatorController;
import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

/**
 * A server speaking the Cloud Bigtable API on 127.0.0.1 (an in-process Tabula node or
 * Google's bundled emulator) with the official data and table-admin clients connected to
 * it. {@link #stop()} closes the clients and stops the server (a Tabula node cleanly, its
 * memtables flushed), keeping Tabula's data; {@link #close()} stops it if it still runs and
 * deletes that data. Not thread-safe.
 */
final class ApiPeer implements AutoCloseable {
  static final String PROJECT = "p";
  static final String INSTANCE = "i";
  static final String LOOPBACK = "127.0.0.1";

  private final String name;
  private final AutoCloseable server;
  /** Tabula's data folder, deleted at {@link #close()}; null for the emulator. */
  private final Path dataDir;
  private final BigtableDataClient data;
  private final BigtableTableAdminClient admin;
  private boolean stopped;

  private ApiPeer(String name, AutoCloseable server, Path dataDir, int port) throws IOException {
    this.name = name;
    this.server = server;
    this.dataDir = dataDir;
    this.data = BigtableDataClient.create(BigtableDataSettings.newBuilderForEmulator(LOOPBACK, port)
        .setProjectId(PROJECT)
        .setInstanceId(INSTANCE)
        .setMetricsProvider(NoopMetricsProvider.INSTANCE)
        .disableInternalMetrics()
        .build());
    this.admin = BigtableTableAdminClient.create(BigtableTableAdminSettings.newBuilderForEmulator(LOOPBACK, port)
        .setProjectId(PROJECT)
        .setInstanceId(INSTANCE)
        .build());
  }

  /** Starts Google's bundled emulator on a free loopback port. */
  static ApiPeer emulator() throws IOException {
    EmulatorController emulator = EmulatorController.createBundled();
    try {
      emulator.start();
    } catch (TimeoutException e) {
      throw new IOException("the bundled emulator did not open its port", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting the bundled emulator", e);
    }
    try {
      return new ApiPeer("emulator", emulator::stop, null, emulator.getPort());
    } catch (IOException | RuntimeException e) {
      emulator.stop();
      throw e;
    }
  }

  /** Starts a single Tabula node in this JVM on free loopback ports, its data in a fresh temporary folder. */
  static ApiPeer tabula() throws IOException {
    return tabula(Map.of());
  }

  /** As {@link #tabula()}, with {@code tabula.node.*} settings replaced by {@code nodeSettings}. */
  static ApiPeer tabula(Map<String, Object> nodeSettings) throws IOException {
    Path dataDir = Files.createTempDirectory("tabula-bench-");
    TabulaNode node;
    try {
      Map<String, Object> settings = new HashMap<>();
      nodeSettings.forEach((k, v) -> settings.put("tabula.node." + k, v));
      settings.put("tabula.node.data-dir", dataDir.toString());
      settings.put("tabula.node.grpc-port", 0);
      settings.put("tabula.node.http-port", 0);
      node = TabulaNode.start(ConfigFactory.parseMap(settings));
    } catch (RuntimeException e) {
      DataDirectory.deleteTree(dataDir);
      throw e;
    }
    try {
      return new ApiPeer("tabula", node::close, dataDir, node.grpcPort());
    } catch (IOException | RuntimeException e) {
      try {
        try {
          node.close();
        } finally {
          DataDirectory.deleteTree(dataDir);
        }
      } catch (IOException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  String name() {
    return name;
  }

  BigtableDataClient data() {
    return data;
  }

  /** Tabula's data folder (the node's {@code data-dir}); empty for the emulator. */
  Optional<Path> dataDir() {
    return Optional.ofNullable(dataDir);
  }

  /** Creates {@code table} with the one column family {@code family}. */
  void createTable(String table, String family) {
    createTable(CreateTableRequest.of(table).addFamily(family));
  }

  /** Creates the table {@code request} describes. */
  void createTable(CreateTableRequest request) {
    admin.createTable(request);
  }

  /** Closes the clients and stops the server, keeping Tabula's data; does nothing the second time. */
  void stop() throws Exception {
    if (stopped) {
      return;
    }
    stopped = true;
    try (AutoCloseable s = server) {
      try (BigtableDataClient d = data) {
        admin.close();
      }
    }
  }

  @Override
  public void close() throws Exception {
    try {
      stop();
    } finally {
      if (dataDir != null && Files.exists(dataDir)) {
        DataDirectory.deleteTree(dataDir);
      }
    }
  }
}
