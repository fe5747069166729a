package io.tabula.bench.e2e;

import io.tabula.bench.DataDirectory;
import io.tabula.cluster.ServerCommand;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Tabula node as its own JVM: {@code tabula server} (the node module's plain entry point,
 * {@link ServerCommand}) on 127.0.0.1 with free ports, its data in a fresh temporary folder,
 * and the settings given written to the {@code --config} file beside it; secured, when asked,
 * with TLS and bearer tokens ({@link NodeSecurityFiles}: {@code --tls-cert}, {@code --tls-key},
 * {@code --auth}). The node runs with this JVM's class path (so it logs as the bench's
 * {@code logback.xml} says) and its own JVM options; its output goes to {@code node.log} in the
 * folder.
 *
 * <p>{@link #close()} sends SIGTERM (coordinated shutdown flushes the memtables), waits a
 * bounded time, kills the process if it is still there, and deletes the folder. A shutdown
 * hook does the same if this JVM exits first. Not thread-safe.
 */
final class NodeProcess implements AutoCloseable {
  /** The line {@code tabula server} prints once the API is bound. */
  private static final Pattern SERVING = Pattern.compile("Tabula serving the Cloud Bigtable API on ([0-9.]+):(\\d+)");
  private static final Duration STOP_WITHIN = Duration.ofSeconds(30);

  private final Process process;
  private final Path folder;
  private final Path log;
  private final Thread hook;
  private final Optional<NodeSecurityFiles> security;
  private int port;

  private NodeProcess(Process process, Path folder, Path log, Optional<NodeSecurityFiles> security) {
    this.process = process;
    this.folder = folder;
    this.log = log;
    this.security = security;
    this.hook = new Thread(this::kill, "stop-tabula-node");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /**
   * Starts a node and waits until it serves.
   *
   * @param config HOCON layered over the node's defaults (data directory and ports are set here)
   * @param jvmOptions options of the node's JVM, e.g. its heap size
   * @param within how long to wait for the node to serve
   * @throws IOException if it exits or does not serve in time; its log is in the message
   */
  static NodeProcess start(String config, List<String> jvmOptions, Duration within) throws IOException {
    return start(config, jvmOptions, Optional.empty(), within);
  }

  /**
   * Starts a node and waits until it serves, secured with {@code security}'s certificate, key and
   * auth file when present (TLS on both ports, every call authenticated); the caller keeps
   * {@code security} until the node is closed.
   */
  static NodeProcess start(String config, List<String> jvmOptions, Optional<NodeSecurityFiles> security,
      Duration within) throws IOException {
    Path folder = Files.createTempDirectory("tabula-e2e-");
    Path conf = folder.resolve("node.conf");
    Path log = folder.resolve("node.log");
    Files.writeString(conf, config, StandardCharsets.UTF_8);
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmOptions);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ServerCommand.class.getName(),
        "--port", "0", "--http-port", "0", "--data", folder.resolve("data").toString(), "--config", conf.toString()));
    security.ifPresent(files -> cmd.addAll(files.serverArguments()));
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    } catch (IOException e) {
      DataDirectory.deleteTree(folder);
      throw e;
    }
    NodeProcess node = new NodeProcess(p, folder, log, security);
    try {
      node.port = node.awaitServing(within);
      return node;
    } catch (IOException | RuntimeException e) {
      node.close();
      throw e;
    }
  }

  private int awaitServing(Duration within) throws IOException {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      Matcher m = SERVING.matcher(Files.readString(log, StandardCharsets.UTF_8));
      if (m.find()) {
        return Integer.parseInt(m.group(2));
      }
      if (!process.isAlive()) {
        throw new IOException("the node exited with code " + process.exitValue() + " before serving:\n" + tail());
      }
      if (System.nanoTime() > deadline) {
        throw new IOException("the node did not serve within " + within + ":\n" + tail());
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for the node", e);
      }
    }
  }

  /** The Management HTTP port on 127.0.0.1, as the node's log names it. */
  int httpPort() throws IOException {
    Matcher m = java.util.regex.Pattern.compile("Management HTTP on port (\\d+)")
        .matcher(Files.readString(log, StandardCharsets.UTF_8));
    if (!m.find()) {
      throw new IOException("the node's log names no Management HTTP port:\n" + tail());
    }
    return Integer.parseInt(m.group(1));
  }

  /**
   * Waits until the node's {@code /ready} answers 200 (it holds the master's directory and has
   * opened its tablets), over HTTPS trusting the CA when the node is secured; {@code /ready}
   * needs no token. Returns how long that took.
   */
  Duration awaitReady(Duration within) throws IOException, InterruptedException {
    long start = System.nanoTime();
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
    if (security.isPresent()) {
      b.sslContext(security.get().trust());
    }
    HttpClient http = b.build();
    URI ready = URI.create((security.isPresent() ? "https" : "http") + "://127.0.0.1:" + httpPort() + "/ready");
    int status = -1;
    while (System.nanoTime() - start < within.toNanos()) {
      if (!process.isAlive()) {
        throw new IOException("the node exited with code " + process.exitValue() + " before it was ready:\n"
            + tail());
      }
      try {
        status = http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(5)).build(),
            HttpResponse.BodyHandlers.discarding()).statusCode();
        if (status == 200) {
          return Duration.ofNanos(System.nanoTime() - start);
        }
      } catch (IOException notYet) {
        status = -1;
      }
      Thread.sleep(100);
    }
    throw new IOException(ready + " did not answer 200 within " + within + " (last: " + status + "):\n" + tail());
  }

  /** The gRPC port on 127.0.0.1. */
  /** The node's storage root ({@code --data}). */
  Path dataDir() {
    return folder.resolve("data");
  }

  int port() {
    return port;
  }

  String endpoint() {
    return "127.0.0.1:" + port;
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** The last lines of the node's output. */
  String tail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

  /** Stops the node (SIGTERM, then SIGKILL after a bounded wait) and deletes its folder. */
  @Override
  public void close() throws IOException {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // The hook is running or about to; it stops the node.
    }
    process.destroy();
    try {
      if (!process.waitFor(STOP_WITHIN.toSeconds(), TimeUnit.SECONDS)) {
        System.err.println("the node did not stop within " + STOP_WITHIN + " of SIGTERM; killing it");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    kill();
  }

  private void kill() {
    if (process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      if (Files.exists(folder)) {
        DataDirectory.deleteTree(folder);
      }
    } catch (IOException e) {
      System.err.println("could not delete " + folder + ": " + e);
    }
  }
}
