package io.tabula.multijvm;

import io.tabula.cluster.security.PemFiles;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * One Tabula node as its own JVM: {@code tabula server} (the app module's entry point) with
 * this test's class path, on 127.0.0.1 with fresh ports, its output in a log file. The
 * scenario that starts one stops it ({@link #close} kills it if it still runs). A node given
 * {@code --tls-cert} serves Management HTTP over HTTPS: the test calls it trusting that very
 * certificate.
 */
final class NodeJvm implements AutoCloseable {
  static final String HOST = "127.0.0.1";
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private static final String TLS_CERT = "--tls-cert";

  final String name;
  final int grpcPort;
  final int httpPort;
  final int clusterPort;
  final Path log;
  private final Process process;
  /** http, or https for a node with TLS. */
  private final String scheme;
  private final HttpClient http;

  private NodeJvm(String name, int grpcPort, int httpPort, int clusterPort, Path log, Process process, String scheme,
      HttpClient http) {
    this.name = name;
    this.grpcPort = grpcPort;
    this.httpPort = httpPort;
    this.clusterPort = clusterPort;
    this.log = log;
    this.process = process;
    this.scheme = scheme;
    this.http = http;
  }

  /**
   * Starts node {@code name} over {@code data}, joining {@code seed} (null: it forms the
   * cluster). A small heap and a light JIT, so that four fit beside the test.
   */
  static NodeJvm start(String name, Path data, NodeJvm seed, Path logs, Path config) throws IOException {
    return start(name, data, seed, logs, config, "256m");
  }

  /**
   * As {@link #start(String, Path, NodeJvm, Path, Path)}, with heap {@code heap} ({@code -Xmx}),
   * or {@code "default"}: the JVM's defaults, as {@code bin/tabula server} starts a node.
   */
  static NodeJvm start(String name, Path data, NodeJvm seed, Path logs, Path config, String heap) throws IOException {
    return start(name, data, seed, logs, config, heap, List.of());
  }

  /**
   * As {@link #start(String, Path, NodeJvm, Path, Path, String)}, with {@code flags} added to
   * {@code tabula server}'s ({@code --tls-cert FILE --tls-key FILE --cluster-ca FILE --auth
   * FILE}, say).
   */
  static NodeJvm start(String name, Path data, NodeJvm seed, Path logs, Path config, String heap, List<String> flags)
      throws IOException {
    int grpc = freePort();
    int http = freePort();
    int cluster = freePort();
    // A node started again under its name (a new life) logs beside the earlier one's log.
    Path log = logs.resolve(name + ".log");
    for (int life = 2; Files.exists(log); life++) {
      log = logs.resolve(name + "-" + life + ".log");
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // "default": the JVM's own heap, collector and compilers, as bin/tabula starts a node
    List<String> command = new ArrayList<>(List.of(java));
    if (!heap.equals("default")) {
      command.addAll(List.of("-Xmx" + heap, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
          "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2"));
    }
    // Extra options for every node, to look into one (a flight recording, for example).
    String extra = System.getProperty("tabula.test.node-java-options", "").trim();
    if (!extra.isEmpty()) {
      command.addAll(List.of(extra.replace("{node}", name).split("\\s+")));
    }
    command.addAll(List.of("-XX:+ExitOnOutOfMemoryError",
        "-cp", System.getProperty("java.class.path"), "io.tabula.app.Main", "server", "--data", data.toString(),
        "--node", name, "--host", HOST, "--port", Integer.toString(grpc), "--http-port", Integer.toString(http),
        "--cluster-port", Integer.toString(cluster)));
    if (seed != null) {
      command.addAll(List.of("--join", HOST + ":" + seed.clusterPort));
    }
    if (config != null) {
      command.addAll(List.of("--config", config.toString()));
    }
    command.addAll(flags);
    int cert = flags.indexOf(TLS_CERT);
    HttpClient client = cert < 0 ? HTTP : trusting(Path.of(flags.get(cert + 1)));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new NodeJvm(name, grpc, http, cluster, log, p, cert < 0 ? "http" : "https", client);
  }

  /** An HTTP client that trusts the certificate(s) in {@code pem} and nothing else. */
  private static HttpClient trusting(Path pem) throws IOException {
    try {
      SSLContext tls = SSLContext.getInstance("TLS");
      tls.init(null, PemFiles.trusting(pem), null);
      return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).sslContext(tls).build();
    } catch (GeneralSecurityException e) {
      throw new IOException("no TLS client trusting " + pem, e);
    }
  }

  String endpoint() {
    return HOST + ":" + grpcPort;
  }

  boolean alive() {
    return process.isAlive();
  }

  long pid() {
    return process.pid();
  }

  /** Waits until the node answers {@code /ready} with 200 (Up, directory held, its tablets open). */
  void awaitReady(Duration within) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with code " + process.exitValue() + "; its log:\n"
            + tail(80));
      }
      try {
        if (get("/ready").statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(name + " was not ready within " + within + "; its log:\n" + tail(80));
      }
      Thread.sleep(200);
    }
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A GET of {@code path} with {@code Authorization: Bearer token}. */
  HttpResponse<String> get(String path, String token) throws IOException, InterruptedException {
    return http.send(request(path).header("Authorization", "Bearer " + token).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> post(String path) throws IOException, InterruptedException {
    return http.send(request(path).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(scheme + "://" + HOST + ":" + httpPort + path))
        .timeout(Duration.ofSeconds(10));
  }

  /** The last {@code lines} lines of the node's log. */
  String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /**
   * Whether the node's whole log holds {@code text}. A tail may not reach back far enough: a
   * node that resumes after a freeze can log hundreds of lines of quarantine warnings.
   */
  boolean logContains(String text) {
    try {
      return Files.readString(log).contains(text);
    } catch (IOException e) {
      return false;
    }
  }

  /** Waits up to {@code within} for the process to end on its own; whether it did. */
  boolean awaitExit(Duration within) throws InterruptedException {
    return process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** SIGTERM (coordinated shutdown), waiting up to {@code within} for the process to end. */
  boolean terminate(Duration within) throws InterruptedException {
    process.destroy();
    return process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** SIGKILL (a crash: no shutdown, no flush), waiting up to 15 s for the process to be gone. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(15, TimeUnit.SECONDS)) {
      throw new IllegalStateException(name + " still runs 15 s after SIGKILL");
    }
  }

  /** Sends the process signal {@code signal} (STOP, CONT, ...) with kill(1). */
  void signal(String signal) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("could not send SIG" + signal + " to node " + this.name);
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor(15, TimeUnit.SECONDS);
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
      return s.getLocalPort();
    }
  }
}
