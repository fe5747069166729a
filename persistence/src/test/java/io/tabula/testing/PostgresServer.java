package io.tabula.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real PostgreSQL server of the tests' own: a fresh cluster (initdb) in a temporary folder,
 * listening on a free port of 127.0.0.1 only, stopped by {@link #close} (and by a shutdown hook
 * if the test JVM ends first). The server binaries are Debian's; if none is installed, the
 * project's {@code bin/install-postgres} installs them. Logins are trusted (no password) on
 * loopback: a test server, never a deployment (docs/deploy.md has those settings).
 *
 * <p>Run as root (CI machines), the server runs as the {@code postgres} user the package
 * creates, since PostgreSQL refuses to run as root.
 */
public final class PostgresServer implements AutoCloseable {
  public static final String USER = "tabula";
  public static final String DATABASE = "tabula";

  private final Path bin;
  private final Path data;
  private final Path log;
  private final int port;
  private final boolean asPostgres;
  private final Thread hook;

  private PostgresServer(Path bin, Path data, Path log, int port, boolean asPostgres) {
    this.bin = bin;
    this.data = data;
    this.log = log;
    this.port = port;
    this.asPostgres = asPostgres;
    this.hook = new Thread(this::stopQuietly, "stop-test-postgres");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Starts a new server with its files under {@code base}, which it creates. */
  public static PostgresServer start(Path base) throws IOException, InterruptedException {
    Path bin = binaries();
    boolean root = "root".equals(System.getProperty("user.name"));
    Files.createDirectories(base);
    // The server's user must reach its folder through every parent.
    for (Path p = base.toAbsolutePath(); p != null && root; p = p.getParent()) {
      if (p.startsWith(System.getProperty("java.io.tmpdir")) && !p.equals(Path.of(System.getProperty("java.io.tmpdir")))) {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
    }
    Path data = base.resolve("pgdata");
    Path log = base.resolve("postgres.log");
    Files.createDirectories(data);
    Files.createFile(log);
    if (root) {
      run(List.of("chown", "-R", "postgres:postgres", data.toString(), log.toString()), false);
    }
    long t = System.nanoTime();
    run(List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", USER, "--auth=trust", "-E", "UTF8",
        "--no-sync"), root);
    int port = freePort();
    PostgresServer s = new PostgresServer(bin, data, log, port, root);
    run(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l", log.toString(), "-w", "-t", "60",
        "-o", "-p " + port + " -k " + data + " -c listen_addresses=127.0.0.1 -c max_connections=200", "start"), root);
    run(List.of(bin.resolve("createdb").toString(), "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", USER,
        DATABASE), root);
    System.out.printf("PostgresServer: PostgreSQL %s up on 127.0.0.1:%d in %.1f s%n", bin.getParent().getFileName(),
        port, (System.nanoTime() - t) / 1e9);
    return s;
  }

  /** The JDBC URL of the {@value #DATABASE} database. */
  public String url() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + DATABASE;
  }

  public int port() {
    return port;
  }

  /** The last lines of the server's log, for a failure message. */
  public String logTail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

  @Override
  public void close() {
    stopQuietly();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
  }

  private void stopQuietly() {
    try {
      if (Files.exists(data.resolve("postmaster.pid"))) {
        run(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "fast", "-w", "stop"), asPostgres);
      }
    } catch (IOException | InterruptedException | RuntimeException e) {
      System.err.println("PostgresServer: stopping the server under " + data + " failed: " + e);
    }
  }

  /** The newest installed server's bin folder, installing one first if there is none. */
  private static Path binaries() throws IOException, InterruptedException {
    Path found = newestInstalled();
    if (found == null) {
      Path script = projectRoot().resolve("bin").resolve("install-postgres");
      System.out.println("PostgresServer: no PostgreSQL server installed; running " + script);
      run(List.of("bash", script.toString()), false);
      found = newestInstalled();
      if (found == null) {
        throw new IllegalStateException("bin/install-postgres ran but no PostgreSQL server is installed");
      }
    }
    return found;
  }

  private static Path newestInstalled() throws IOException {
    Path lib = Path.of("/usr/lib/postgresql");
    if (!Files.isDirectory(lib)) {
      return null;
    }
    try (Stream<Path> versions = Files.list(lib)) {
      return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
          .max(Comparator.comparing(b -> Integer.parseInt(b.getParent().getFileName().toString().replaceAll("\\D", "0"))))
          .orElse(null);
    }
  }

  private static Path projectRoot() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("bin").resolve("install-postgres"))) {
        return p;
      }
    }
    throw new IllegalStateException("cannot find the project's bin/install-postgres above " + Path.of("").toAbsolutePath());
  }

  private static void run(List<String> command, boolean asPostgres) throws IOException, InterruptedException {
    List<String> full = new ArrayList<>();
    if (asPostgres) {
      full.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    full.addAll(command);
    Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("timed out: " + String.join(" ", full));
    }
    if (p.exitValue() != 0) {
      throw new IOException("failed with exit code " + p.exitValue() + ": " + String.join(" ", full) + "\n"
          + new String(out, java.nio.charset.StandardCharsets.UTF_8));
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
