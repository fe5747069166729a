package io.tabula.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import java.io.File;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;

/**
 * {@code server}: runs one node in the foreground until it is told to stop (SIGTERM or
 * Ctrl-C run its coordinated shutdown, then the JVM exits). It is a subcommand
 * of the {@code tabula} command line (the {@code app} module), and, through {@link #main},
 * the plain entry point that starts a node on its own:
 * <pre>{@code
 * java -cp <class path> io.tabula.cluster.ServerCommand --data DIR --port N --http-port N
 * }</pre>
 * A cluster is nodes sharing one {@code --data} root, each with its own {@code --node}
 * name and ports, the others started with {@code --join} naming the first's cluster port.
 * as process tests and benchmarks do. Once the API is bound it prints one line on stdout,
 * {@code Tabula serving the Cloud Bigtable API on host:port (data in dir, Management HTTP on
 * port N)}; its logging is
 * the program's to configure (this module ships no logging configuration).
 */
@Command(name = "server", mixinStandardHelpOptions = true,
    description = "Runs a Tabula node serving the Cloud Bigtable API until SIGTERM or Ctrl-C.")
public final class ServerCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--port", paramLabel = "N",
      description = "gRPC port of the Cloud Bigtable API (default 8086; 0 picks a free port).")
  Integer port;

  @Option(names = "--http-port", paramLabel = "N",
      description = "Pekko Management HTTP port (default 8558; 0 picks a free port).")
  Integer httpPort;

  @Option(names = "--data", paramLabel = "DIR", description = "Data directory (default ./tabula-data).")
  File data;

  @Option(names = "--node", paramLabel = "NAME",
      description = "This node's name, unique in the cluster and kept across restarts (default node1).")
  String node;

  @Option(names = "--host", paramLabel = "HOST",
      description = "Address this node binds and other nodes reach it at (default 127.0.0.1).")
  String host;

  @Option(names = "--cluster-port", paramLabel = "N",
      description = "Pekko cluster port (default 0: a free port, fine for a node alone).")
  Integer clusterPort;

  @Option(names = "--join", paramLabel = "HOST:PORT", split = ",",
      description = "Seed nodes' cluster addresses to join; without it the node forms a cluster of its own.")
  java.util.List<String> join;

  @Option(names = "--tls-cert", paramLabel = "FILE",
      description = "PEM certificate chain: TLS on the gRPC port, Management HTTP and between nodes.")
  File tlsCert;

  @Option(names = "--tls-key", paramLabel = "FILE", description = "PEM private key of --tls-cert.")
  File tlsKey;

  @Option(names = "--tls-client-ca", paramLabel = "FILE",
      description = "PEM CA certificates of client certificates to accept (their subject is the principal).")
  File tlsClientCa;

  @Option(names = "--cluster-ca", paramLabel = "FILE",
      description = "PEM CA certificates of the cluster's members (default: the node's own certificate).")
  File clusterCa;

  @Option(names = "--auth", paramLabel = "FILE",
      description = "HOCON file with tabula.security { tokens = [...], admins = [...] } (docs/security.md).")
  File auth;

  @Option(names = "--insecure",
      description = "Start on a non-loopback --host without TLS or authentication, accepting the risk.")
  boolean insecure;

  @Option(names = "--config", paramLabel = "FILE",
      description = "HOCON file layered over the defaults; the flags above override it.")
  File config;

  /**
   * Runs a node with the server's flags (no {@code server} word before them) and exits with
   * the command's code: 0 after a clean shutdown, 2 for bad flags, 1 if the node could not
   * start. Errors are reported as picocli does by default, with the usage or the stack trace.
   */
  public static void main(String[] args) {
    TabulaNode.widenCommonPool();
    int code = new CommandLine(new ServerCommand()).execute(args);
    // The node's threads (storage engine, JDBC pool, gRPC) need not all be daemons: leave
    // explicitly. After a SIGTERM the node has shut down by the time call() returns; the JVM's
    // shutdown hooks run now.
    System.exit(code);
  }

  @Override
  public Integer call() throws Exception {
    Config effective = configuration();
    TabulaNode node = TabulaNode.start(effective);
    NodeSettings s = node.settings();
    System.out.println("Tabula serving the Cloud Bigtable API on " + s.host() + ":" + node.grpcPort()
        + " (data in " + s.dataDir() + ", Management HTTP on port " + node.httpPort() + ")");
    System.out.flush();
    stopOnSignals(node.system());
    // Blocks until the node has stopped (NodeShutdown.awaitStopped): coordinated shutdown (run on SIGTERM /
    // Ctrl-C) drains the node, unbinds the API and flushes the memtables.
    NodeShutdown.awaitStopped(node.system(), Duration.ofDays(36_500));
    return 0;
  }

  /**
   * SIGTERM and SIGINT run the node's coordinated shutdown before the JVM begins to exit,
   * instead of through Pekko's JVM shutdown hook. The JVM runs all its hooks at once, and
   * the embedded master journal's (H2's) hook closes the database at once: the master on a
   * stopping node could then not record the moves of the node's own drain ("Database is
   * already closed"). Here the hooks run only after the actor system has terminated, when
   * {@link #main} exits. A second signal changes nothing; SIGKILL still stops the node at once.
   */
  private static void stopOnSignals(ActorSystem<?> system) {
    for (String name : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(name),
          s -> CoordinatedShutdown.get(system).runAll(CoordinatedShutdown.jvmExitReason()));
    }
  }

  /** The flags and the {@code --config} file as configuration overrides; a bad file is a usage error. */
  Config configuration() {
    Map<String, Object> flags = new HashMap<>();
    if (port != null) {
      flags.put("tabula.node.grpc-port", port);
    }
    if (httpPort != null) {
      flags.put("tabula.node.http-port", httpPort);
    }
    if (data != null) {
      flags.put("tabula.node.data-dir", data.getPath());
    }
    if (node != null) {
      flags.put("tabula.node.name", node);
    }
    if (host != null) {
      flags.put("tabula.node.host", host);
    }
    if (clusterPort != null) {
      flags.put("tabula.node.cluster-port", clusterPort);
    }
    if (join != null) {
      flags.put("tabula.node.join", join);
    }
    putFile(flags, "tabula.node.tls.cert-file", tlsCert);
    putFile(flags, "tabula.node.tls.key-file", tlsKey);
    putFile(flags, "tabula.node.tls.client-ca-file", tlsClientCa);
    putFile(flags, "tabula.node.tls.cluster-ca-file", clusterCa);
    putFile(flags, "tabula.security.auth-file", auth);
    if (insecure) {
      flags.put("tabula.node.insecure", true);
    }
    Config base = ConfigFactory.empty();
    if (config != null) {
      if (!config.isFile()) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--config: no such file: " + config);
      }
      try {
        base = ConfigFactory.parseFile(config).withFallback(base);
      } catch (ConfigException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--config: " + e.getMessage());
      }
    }
    return ConfigFactory.parseMap(flags).withFallback(base);
  }

  private void putFile(Map<String, Object> flags, String key, File file) {
    if (file == null) {
      return;
    }
    if (!file.isFile()) {
      throw new CommandLine.ParameterException(spec.commandLine(), "no such file: " + file + " (for " + key + ")");
    }
    flags.put(key, file.getAbsolutePath());
  }
}
