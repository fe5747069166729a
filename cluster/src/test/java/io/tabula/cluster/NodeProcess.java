package io.tabula.cluster;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A node as its own JVM ({@code tabula server}, through the node's plain entry point
 * {@link ServerCommand#main}) on 127.0.0.1, with its output (logged as the test class path's
 * {@code logback-test.xml} says) in a log file. The test that starts one stops it: {@link #close}
 * kills it if it still runs.
 */
public final class NodeProcess implements AutoCloseable {
  private static final String LOOPBACK = "127.0.0.1";

  private final Process process;
  private final int port;
  private final Path log;

  private NodeProcess(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  /** Starts a node on the given ports over {@code data}; returns at once (see {@link #awaitListening}). */
  public static NodeProcess start(Path data, int grpcPort, int httpPort, Path log) throws IOException {
    return start(data, grpcPort, httpPort, log, List.of("-Xmx512m"));
  }

  /**
   * The same with the node JVM's own flags ({@code -Xmx192m}, {@code -XX:+ExitOnOutOfMemoryError}, ...),
   * given before the class path; the JIT and GC flags that keep a test node light come first.
   */
  public static NodeProcess start(Path data, int grpcPort, int httpPort, Path log, List<String> jvmArgs)
      throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    command.addAll(jvmArgs);
    command.addAll(List.of("-cp", classPath(), ServerCommand.class.getName(), "--data", data.toString(),
        "--port", Integer.toString(grpcPort), "--http-port", Integer.toString(httpPort)));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    return new NodeProcess(pb.start(), grpcPort, log);
  }

  /** The process id, for reading its memory use from {@code /proc}. */
  public long pid() {
    return process.pid();
  }

  public Process process() {
    return process;
  }

  public int port() {
    return port;
  }

  public Path log() {
    return log;
  }

  /**
   * Waits until the gRPC port accepts connections: the node binds it last, once the master
   * has recovered and the engine is open.
   */
  public void awaitListening(Duration within) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the node exited with code " + process.exitValue() + " before listening; "
            + "its output:\n" + Files.readString(log));
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(LOOPBACK, port), 500);
        return;
      } catch (IOException notYet) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the node did not listen on port " + port + " within " + within
              + "; its output:\n" + Files.readString(log));
        }
        Thread.sleep(100);
      }
    }
  }

  /** The last {@code lines} lines of the node's output, for a failure message. */
  public String logTail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** SIGKILL, and waits for the process to be gone. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(15, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the killed node did not go away within 15 s");
    }
  }

  /** Kills the node if it still runs. */
  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }

  /**
   * The test JVM's class path, with the sibling Tabula modules taken from this checkout's
   * {@code target/classes} where they exist rather than from the local Maven repository,
   * which other checkouts may overwrite with their own snapshot jars while the test runs.
   */
  public static String classPath() {
    Path root = Path.of("").toAbsolutePath().getParent();
    List<String> entries = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Path.of(entry).getFileName().toString();
      if (name.startsWith("tabula-") && name.endsWith(".jar") && root != null) {
        String module = name.substring("tabula-".length()).replaceFirst("-\\d.*\\.jar$", "");
        Path classes = root.resolve(module).resolve("target").resolve("classes");
        if (Files.isDirectory(classes)) {
          entries.add(classes.toString());
          continue;
        }
      }
      entries.add(entry);
    }
    return String.join(File.pathSeparator, entries);
  }

  /** A port free on 127.0.0.1 now (another process may take it before it is used). */
  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
      return s.getLocalPort();
    }
  }
}
