package io.tabula.bench.e2e;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A cluster of node JVMs on 127.0.0.1 over one fresh storage root, for the benchmarks that
 * need several nodes; closing stops them and deletes the root. {@code javaOpts} may name the
 * node with {@code {node}} (say, for a Flight Recorder file of its own).
 */
final class BenchCluster implements AutoCloseable {
  private static final Pattern SERVING = Pattern.compile("Tabula serving the Cloud Bigtable API on");

  /** CPU time used so far: the nodes' processes, this (client) process, the nodes' JIT compiler threads. */
  record Cpu(long nodeNanos, long clientNanos, long nodeJitNanos) {
    Cpu minus(Cpu o) {
      return new Cpu(nodeNanos - o.nodeNanos, clientNanos - o.clientNanos, nodeJitNanos - o.nodeJitNanos);
    }
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final Pattern TABLET = Pattern.compile(
      "\"id\":\"([^\"]+)\".*?\"owner\":\"([^\"]*)\",\"state\":\"([a-z]+)\"");

  final Path root;
  final List<Node> nodes = new ArrayList<>();
  final List<String> names = new ArrayList<>();

  record Node(Process process, int grpc, int http, Path log) {}

  private BenchCluster(Path root) {
    this.root = root;
  }

  static BenchCluster start(int n, String javaOpts) throws IOException, InterruptedException {
    return start(n, node -> javaOpts.replace("{node}", node), List.of());
  }

  /**
   * Starts {@code n} nodes, n1 first; {@code javaOptsOf} gives each node's JVM options by name,
   * and every node gets {@code args} after its own (a {@code --config} file, say).
   */
  static BenchCluster start(int n, java.util.function.UnaryOperator<String> javaOptsOf, List<String> args)
      throws IOException, InterruptedException {
    BenchCluster c = new BenchCluster(Files.createTempDirectory("tabula-cluster-bench-"));
    Runtime.getRuntime().addShutdownHook(new Thread(c::kill));
    int seed = 0;
    for (int i = 1; i <= n; i++) {
      int grpc = freePort();
      int http = freePort();
      int clusterPort = freePort();
      seed = i == 1 ? clusterPort : seed;
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(Arrays.asList(javaOptsOf.apply("n" + i).trim().split("\\s+")));
      cmd.add("-Djava.util.concurrent.ForkJoinPool.common.parallelism=2");
      cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.tabula.cluster.ServerCommand",
          "--data", c.root.resolve("data").toString(), "--node", "n" + i, "--port", Integer.toString(grpc),
          "--http-port", Integer.toString(http), "--cluster-port", Integer.toString(clusterPort)));
      if (i > 1) {
        cmd.addAll(List.of("--join", "127.0.0.1:" + seed));
      }
      cmd.addAll(args);
      Path log = c.root.resolve("n" + i + ".log");
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      c.nodes.add(new Node(p, grpc, http, log));
      c.names.add("n" + i);
      c.awaitServing(c.nodes.get(i - 1));
    }
    c.awaitReady();
    return c;
  }

  private void awaitServing(Node n) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (!SERVING.matcher(Files.readString(n.log)).find()) {
      if (!n.process.isAlive() || System.nanoTime() > deadline) {
        throw new IOException("a node did not start:\n" + Files.readString(n.log));
      }
      TimeUnit.MILLISECONDS.sleep(100);
    }
  }

  /** Waits until every node answers /ready (its tablets open). */
  void awaitReady() throws IOException, InterruptedException {
    for (Node n : nodes) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (get(n, "/ready").statusCode() != 200) {
        if (System.nanoTime() > deadline) {
          throw new IOException("a node was not ready in 60 s:\n" + Files.readString(n.log));
        }
        TimeUnit.MILLISECONDS.sleep(100);
      }
    }
  }

  String endpoint(int i) {
    return "127.0.0.1:" + nodes.get(i).grpc;
  }

  Cpu cpu() {
    long node = 0;
    long jit = 0;
    for (Node n : nodes) {
      node += n.process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
      jit += JitActivity.compilerNanos(n.process.pid()).orElse(0);
    }
    long client = ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean.class)
        .getProcessCpuTime();
    return new Cpu(node, client, jit);
  }

  /** The body of n1's answer to GET {@code path} on its Management HTTP port. */
  String get(String path) throws IOException, InterruptedException {
    return get(nodes.get(0), path).body();
  }

  private HttpResponse<String> get(Node n, String path) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.http + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * POSTs {@code path} and expects 202. A 409 (the tablet is already moving: the master's
   * balancer may move it too) is asked again every 200 ms, for up to 30 s, once that move is over.
   */
  void post(String path) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + nodes.get(0).http
          + path)).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 202) {
        return;
      }
      if (r.statusCode() != 409 || System.nanoTime() > deadline) {
        throw new IOException("POST " + path + ": " + r.statusCode() + " " + r.body());
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
  }

  /** {id, owner, state} of each tablet of {@code table}, in row order. */
  List<String[]> tablets(String table) throws IOException, InterruptedException {
    List<String[]> out = new ArrayList<>();
    for (String t : get(nodes.get(0), "/tabula/tablets?table=" + table).body().split("\\},\\{")) {
      Matcher m = TABLET.matcher(t);
      if (m.find()) {
        out.add(new String[] {m.group(1), m.group(2), m.group(3)});
      }
    }
    return out;
  }

  void awaitServingAt(String table, String id, String to) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      for (String[] t : tablets(table)) {
        if (t[0].equals(id) && t[1].equals(to) && t[2].equals("serving")) {
          return;
        }
      }
      TimeUnit.MILLISECONDS.sleep(20);
    }
    throw new IOException("tablet " + id + " did not serve at " + to + " within 60 s");
  }

  private void kill() {
    nodes.forEach(n -> n.process.destroyForcibly());
  }

  /** SIGKILL of node {@code i} (0 is n1), waiting until it is gone. */
  void kill(int i) throws InterruptedException {
    nodes.get(i).process.destroyForcibly();
    nodes.get(i).process.waitFor(30, TimeUnit.SECONDS);
  }

  /** Node {@code i}'s log, as far as it is written. */
  List<String> log(int i) throws IOException {
    return Files.readAllLines(nodes.get(i).log);
  }

  @Override
  public void close() throws Exception {
    nodes.forEach(n -> n.process.destroy());
    for (Node n : nodes) {
      if (!n.process.waitFor(90, TimeUnit.SECONDS)) {
        n.process.destroyForcibly();
      }
    }
    for (int i = 0; i < nodes.size(); i++) {
      printErrors(names.get(i), nodes.get(i).log);
    }
    try (var paths = Files.walk(root)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** The node's logged errors with their stacks (the first few), before its log is deleted with the root. */
  private static void printErrors(String node, Path log) throws IOException {
    List<String> lines = Files.readAllLines(log);
    int printed = 0;
    for (int i = 0; i < lines.size() && printed < 200; i++) {
      if (lines.get(i).contains(" ERROR ")) {
        System.err.println(node + ": " + lines.get(i));
        printed++;
        for (int j = i + 1; j < lines.size() && j <= i + 40 && !lines.get(j).matches("^\\d\\d:\\d\\d.*"); j++) {
          System.err.println(node + ":   " + lines.get(j));
          printed++;
        }
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }
}
