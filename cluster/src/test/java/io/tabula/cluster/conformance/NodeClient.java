package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The official Node.js Cloud Bigtable client ({@code @google-cloud/bigtable}, pinned by
 * {@code src/test/node/package-lock.json}) running {@code src/test/node/scenarios.js}.
 *
 * <p>{@link #install()} copies the project to {@code target/node-client} and runs {@code npm
 * ci} there, npm's cache in {@code target/npm-cache}; it is skipped while {@code
 * node_modules} was installed from the same package.json and lock file. {@link #run} starts
 * {@code node} with a bounded time, kills it (and its children) when that runs out, and fails
 * with its output when it does not end as expected. The client never leaves loopback: its environment has
 * {@code METADATA_SERVER_DETECTION=none} and none of Google's credential or proxy variables.
 */
final class NodeClient {
  private static final Duration INSTALL_TIME = Duration.ofMinutes(5);
  private static final Duration RUN_TIME = Duration.ofMinutes(2);
  private static final Path SOURCE = basedir().resolve("src/test/node");
  private static final Path HOME = basedir().resolve("target/node-client");
  private static final Path CACHE = basedir().resolve("target/npm-cache");
  private static final List<String> FILES = List.of("package.json", "package-lock.json", "scenarios.js");
  /** What must not reach the client: credentials it would use, and proxies it would dial instead of loopback. */
  private static final List<String> UNSET = List.of("GOOGLE_APPLICATION_CREDENTIALS", "BIGTABLE_EMULATOR_HOST",
      "GOOGLE_CLOUD_PROJECT", "grpc_proxy", "https_proxy", "http_proxy", "HTTPS_PROXY", "HTTP_PROXY");

  private NodeClient() {}

  /** What one run printed: each scenario's JSON line by name, in order. */
  record Run(Map<String, JsonObject> scenarios, String output) {
    /** The line of {@code scenario}, which must have answered. */
    JsonObject ok(String scenario) {
      JsonObject line = line(scenario);
      assertTrue(line.get("ok").getAsBoolean(), scenario + " failed: " + line + "\n" + output);
      return line;
    }

    /** The gRPC status code {@code scenario} failed with, which must have failed. */
    int failedWith(String scenario) {
      JsonObject line = line(scenario);
      assertTrue(!line.get("ok").getAsBoolean() && line.get("code").isJsonPrimitive()
          && line.get("code").getAsJsonPrimitive().isNumber(), scenario + " did not fail with a gRPC status: "
          + line + "\n" + output);
      return line.get("code").getAsInt();
    }

    private JsonObject line(String scenario) {
      JsonObject line = scenarios.get(scenario);
      assertTrue(line != null, "no line for " + scenario + "\n" + output);
      return line;
    }
  }

  /** Installs the pinned client into {@code target/node-client} unless it is there already. */
  static void install() throws IOException, InterruptedException {
    Files.createDirectories(HOME);
    for (String file : FILES) {
      Files.copy(SOURCE.resolve(file), HOME.resolve(file), StandardCopyOption.REPLACE_EXISTING);
    }
    String lock = sha256(HOME.resolve("package.json"), HOME.resolve("package-lock.json"));
    Path stamp = HOME.resolve("node_modules/.installed-from");
    if (Files.exists(stamp) && Files.readString(stamp).equals(lock)) {
      return;
    }
    String version = exec(List.of("node", "--version"), Duration.ofSeconds(30), Map.of()).stdout().trim();
    exec(List.of("npm", "--version"), Duration.ofSeconds(30), Map.of());
    System.out.println("installing the Node client with npm ci (node " + version + ")");
    // No install scripts: the client's native CRC32C add-on is optional and falls back to JavaScript.
    exec(List.of("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--cache",
        CACHE.toString()), INSTALL_TIME, Map.of());
    Files.writeString(stamp, lock);
  }

  /**
   * Runs {@code scenarios} (all when empty) against {@code endpoint} (host:port), over TLS
   * trusting {@code ca} when it is not null, sending {@code token} when not null, on the
   * table {@code table}. Fails unless the script ran to its end.
   */
  static Run run(String endpoint, Path ca, String token, String table, String... scenarios)
      throws IOException, InterruptedException {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("TABULA_ENDPOINT", endpoint);
    env.put("TABULA_TABLE", table);
    if (ca != null) {
      env.put("TABULA_CA", ca.toString());
    }
    if (token != null) {
      env.put("TABULA_TOKEN", token);
    }
    List<String> command = new ArrayList<>(List.of("node", "scenarios.js"));
    command.addAll(List.of(scenarios));
    Ended ended = exec(command, RUN_TIME, env);
    String output = ended.stdout() + "--- stderr\n" + ended.stderr();
    Map<String, JsonObject> lines = new LinkedHashMap<>();
    JsonObject done = null;
    for (String line : ended.stdout().lines().toList()) {
      if (line.startsWith("{")) {
        JsonObject json = JsonParser.parseString(line).getAsJsonObject();
        if (json.has("done")) {
          done = json;
        } else {
          lines.put(json.get("scenario").getAsString(), json);
        }
      }
    }
    assertTrue(done != null, "the script did not finish:\n" + output);
    assertEquals(done.get("done").getAsInt(), lines.size(), output);
    return new Run(lines, output);
  }

  /** What a process that exited with 0 printed. */
  private record Ended(String stdout, String stderr) {}

  /** Runs {@code command} in the client's folder; returns what it printed, or fails with it. */
  private static Ended exec(List<String> command, Duration limit, Map<String, String> env)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile(HOME, "out-", ".txt");
    Path err = Files.createTempFile(HOME, "err-", ".txt");
    ProcessBuilder pb = new ProcessBuilder(command).directory(HOME.toFile()).redirectOutput(out.toFile())
        .redirectError(err.toFile());
    UNSET.forEach(pb.environment()::remove);
    pb.environment().put("METADATA_SERVER_DETECTION", "none"); // never ask 169.254.169.254 for credentials
    pb.environment().putAll(env);
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new IOException(command.get(0) + " could not be started: this test needs Node.js 20 or later and npm"
          + " on the PATH (Debian: apt-get install nodejs npm)", e);
    }
    try {
      boolean ended = p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
      if (!ended) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      Ended printed = new Ended(Files.readString(out), Files.readString(err));
      String report = String.join(" ", command) + "\n--- stdout\n" + printed.stdout() + "--- stderr\n"
          + printed.stderr();
      if (!ended) {
        fail("killed after " + limit.toSeconds() + " s: " + report);
      }
      if (p.exitValue() != 0) {
        fail("exit code " + p.exitValue() + ": " + report);
      }
      return printed;
    } finally {
      if (p.isAlive()) { // interrupted
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
      }
      Files.delete(out);
      Files.delete(err);
    }
  }

  private static String sha256(Path... files) throws IOException {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (Path file : files) {
        digest.update(Files.readAllBytes(file));
      }
      return HexFormat.of().formatHex(digest.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The cluster module's folder (Surefire runs tests there and names it in {@code basedir}). */
  private static Path basedir() {
    return Path.of(System.getProperty("basedir", "")).toAbsolutePath();
  }
}
