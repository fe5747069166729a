package io.tabula.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.cluster.security.SecuredNode;
import io.tabula.cluster.security.TestPki;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The {@code tabula} command line against a node with TLS and bearer tokens ({@link
 * SecuredNode}), run through {@link Main#commandLine(Map)} with captured output: the data and
 * admin commands and the cluster's Management HTTP ones work with {@code --tls-ca} and the
 * token from {@code TABULA_TOKEN} (or {@code --token}, which wins); without a good token,
 * with a CA that did not sign the node's certificate, or with a token no header can carry,
 * each fails with one line saying why. The token appears in no output, error or help.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SecureCliTest {
  private static final String ANA = "user:ana@example.com";
  private static final String TOKEN = "ana-cli-token-0123456789";
  private static final String WRONG = "wrong-cli-token-0123456789";

  @TempDir
  static Path dir;
  static SecuredNode secured;
  static String endpoint;
  static String http;
  static String ca;

  @BeforeAll
  static void start() {
    secured = SecuredNode.start(dir, Map.of(ANA, TOKEN), ANA);
    endpoint = "localhost:" + secured.node().grpcPort();
    http = "127.0.0.1:" + secured.node().httpPort();
    ca = secured.caFile().toString();
  }

  @AfterAll
  static void stop() {
    if (secured != null) {
      secured.close();
    }
  }

  /** What a command line printed, and its exit code. */
  private record Run(int code, String out, String err) {
    void assertOk() {
      assertEquals(0, code, () -> "exit code; stderr: " + err);
      assertEquals("", err);
    }

    /** Exactly one line on the error stream, starting with {@code start}. */
    void assertFails(int expected, String start) {
      assertEquals(expected, code, () -> "exit code; stderr: " + err);
      assertEquals(1, err.lines().count(), () -> "one line on stderr, got: " + err);
      assertTrue(err.startsWith(start), () -> "stderr should start with '" + start + "': " + err);
    }
  }

  /** Runs {@code tabula args...} in {@code environment}; neither token shows in what it printed. */
  private static Run tabulaIn(Map<String, String> environment, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine(environment);
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    Run r = new Run(cl.execute(args), out.toString(), err.toString());
    for (String secret : new String[] {TOKEN, WRONG}) {
      assertFalse(r.out.contains(secret) || r.err.contains(secret), () -> String.join(" ", args) + " printed a token: "
          + r);
    }
    return r;
  }

  private static Map<String, String> withToken(String token) {
    return Map.of("TABULA_TOKEN", token);
  }

  @Test
  void theCommandsWorkWithTheCaAndTheTokenFromTheEnvironment() {
    Map<String, String> env = withToken(TOKEN);
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "createtable", "secure", "families=f").assertOk();
    Run ls = tabulaIn(env, "ls", "--tls-ca", ca, "--endpoint", endpoint);
    ls.assertOk();
    assertTrue(ls.out().lines().anyMatch("secure"::equals), ls.out());
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "set", "secure", "r1", "f:a=hello").assertOk();
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "set", "secure", "r2", "f:a=again").assertOk();
    Run read = tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "read", "secure");
    read.assertOk();
    assertTrue(read.out().contains("r1") && read.out().contains("\"hello\"") && read.out().contains("\"again\""),
        read.out());

    Run nodes = tabulaIn(env, "nodes", "--http", http, "--tls-ca", ca);
    nodes.assertOk();
    assertTrue(nodes.out().lines().anyMatch(l -> l.startsWith("node1") && l.contains(" up ")), nodes.out());
    tabulaIn(env, "--tls-ca", ca, "nodes", "--http", "localhost:" + secured.node().httpPort()).assertOk();

    // --token wins over the environment's.
    tabulaIn(withToken(WRONG), "ls", "--tls-ca", ca, "--endpoint", endpoint, "--token", TOKEN).assertOk();
    tabulaIn(withToken(WRONG), "--token", TOKEN, "nodes", "--http", http, "--tls-ca", ca).assertOk();
  }

  /** An admin grants a role on a table and takes it back; the policy shows it; a role Tabula does not know is one line. */
  @Test
  void iamGrantsShowsAndRevokesRolesOnATable() {
    Map<String, String> env = withToken(TOKEN);
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "createtable", "shared", "families=f").assertOk();
    Run empty = tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "iam", "get", "shared");
    empty.assertOk();
    assertEquals("(no bindings)", empty.out().strip());
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "iam", "grant", "shared", "reader", "user:bo@example.com")
        .assertOk();
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "iam", "grant", "shared", "reader", "user:cy@example.com")
        .assertOk();
    Run granted = tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "iam", "get", "shared");
    granted.assertOk();
    assertEquals("roles/bigtable.reader: user:bo@example.com, user:cy@example.com", granted.out().strip());
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "iam", "revoke", "shared", "reader", "user:bo@example.com")
        .assertOk();
    Run revoked = tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "iam", "get", "shared");
    assertEquals("roles/bigtable.reader: user:cy@example.com", revoked.out().strip());
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "iam", "grant", "shared", "owner", "user:bo@example.com")
        .assertFails(1, "tabula: INVALID_ARGUMENT: policy.bindings[0].role");
    tabulaIn(env, "--tls-ca", ca, "--endpoint", endpoint, "iam", "lend", "shared").assertFails(2, "tabula:");
  }

  @Test
  void withoutAGoodTokenEachCommandFailsWithOneLine() {
    for (Map<String, String> env : java.util.List.of(Map.<String, String>of(), withToken(WRONG))) {
      Run ls = tabulaIn(env, "ls", "--tls-ca", ca, "--endpoint", endpoint);
      ls.assertFails(1, "tabula: UNAUTHENTICATED: ");
      assertTrue(ls.err().contains("(a token is given with --token or $TABULA_TOKEN)"), ls.err());
      tabulaIn(env, "read", "secure", "--tls-ca", ca, "--endpoint", endpoint)
          .assertFails(1, "tabula: UNAUTHENTICATED: ");
      tabulaIn(env, "set", "secure", "r3", "f:a=x", "--tls-ca", ca, "--endpoint", endpoint)
          .assertFails(1, "tabula: UNAUTHENTICATED: ");
      Run nodes = tabulaIn(env, "nodes", "--http", http, "--tls-ca", ca);
      nodes.assertFails(1, "tabula: ");
      assertTrue(nodes.err().contains("(a token is given with --token or $TABULA_TOKEN)"), nodes.err());
      assertEquals("", nodes.out(), "nothing printed before the failure");
    }
    tabulaIn(withToken(TOKEN + "\n"), "ls", "--tls-ca", ca, "--endpoint", endpoint)
        .assertFails(2, "tabula: TABULA_TOKEN: the token has white space");
    tabulaIn(Map.of(), "ls", "--tls-ca", ca, "--endpoint", endpoint, "--token", "bad\u00e9" + TOKEN)
        .assertFails(2, "tabula: --token: the token has a character an HTTP header value may not carry");
    tabulaIn(withToken(TOKEN + "\n"), "nodes", "--http", http, "--tls-ca", ca)
        .assertFails(2, "tabula: TABULA_TOKEN: the token has white space");
  }

  @Test
  void aCaThatDidNotSignTheNodeIsOneClearLine() {
    String other = TestPki.ca("another CA").writeCertificate(dir.resolve("other-ca.crt")).toString();
    Map<String, String> env = withToken(TOKEN);
    tabulaIn(env, "ls", "--tls-ca", other, "--endpoint", endpoint)
        .assertFails(1, "tabula: UNAVAILABLE: Tabula at " + endpoint + ": the node's TLS certificate was not accepted");
    tabulaIn(env, "nodes", "--http", http, "--tls-ca", other)
        .assertFails(1, "tabula: TLS with Management HTTP at " + http + " failed");
    tabulaIn(env, "ls", "--tls-ca", dir.resolve("none.crt").toString(), "--endpoint", endpoint)
        .assertFails(2, "tabula: --tls-ca: the CA file " + dir.resolve("none.crt") + " does not exist");
  }

  @Test
  void theHelpShowsNoToken() {
    for (String[] args : new String[][] {{"--help"}, {"ls", "--help"}, {"nodes", "--help"}, {"read", "--help"}}) {
      Run help = tabulaIn(withToken(TOKEN), args);
      assertEquals(0, help.code(), help::toString);
      assertTrue(help.out().contains("--token") || args.length == 1, help.out());
    }
  }
}
