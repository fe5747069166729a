package io.tabula.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.client.TabulaClient;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Where a command's connection comes from: options after the command, before it (as cbt
 * takes them), both (after wins), {@code BIGTABLE_EMULATOR_HOST} from an injected
 * environment, and the defaults. Parsing only: nothing connects.
 */
class ConnectionOptionsTest {
  private static final Map<String, String> NO_VARIABLE = Map.of("HOME", "/home/someone");
  private static final Map<String, String> VARIABLE = Map.of(ConnectionOptions.ENDPOINT_VARIABLE, "10.0.0.5:9000");

  /** A top-level command like the program's, with a command of its own that does not connect. */
  @Command(name = "tabula", subcommands = Top.Server.class)
  static final class Top implements Runnable {
    static final AtomicBoolean SERVED = new AtomicBoolean();

    @Override
    public void run() {}

    @Command(name = "server")
    static final class Server implements Runnable {
      @Override
      public void run() {
        SERVED.set(true);
      }
    }
  }

  private static ConnectionOptions.Settings settings(Map<String, String> env, String... args) {
    CommandLine cl = new CommandLine(new Top());
    TabulaCommands.addTo(cl, env);
    CommandLine.ParseResult parsed = cl.parseArgs(args);
    return ((ClientCommand) parsed.subcommand().commandSpec().userObject()).settings();
  }

  @Test
  void optionsMayComeAfterTheCommand() {
    ConnectionOptions.Settings s = settings(NO_VARIABLE, "ls", "--endpoint", "node1:8086", "--instance", "p/i",
        "--timeout", "2s");
    assertEquals("node1:8086", s.endpoint());
    assertEquals("p/i", s.instance());
    assertEquals(Duration.ofSeconds(2), s.timeout());
  }

  @Test
  void optionsMayComeBeforeTheCommandAsCbtTakesThem() {
    ConnectionOptions.Settings s = settings(NO_VARIABLE, "--endpoint", "node1:8086", "--instance", "p/i",
        "--timeout", "500ms", "createtable", "t");
    assertEquals("node1:8086", s.endpoint());
    assertEquals("p/i", s.instance());
    assertEquals(Duration.ofMillis(500), s.timeout());
  }

  @Test
  void givenOnBothSidesTheOneAfterTheCommandWinsOptionByOption() {
    ConnectionOptions.Settings s = settings(NO_VARIABLE, "--endpoint", "before:1", "--timeout", "9s", "ls",
        "--endpoint", "after:2");
    assertEquals("after:2", s.endpoint());
    assertEquals(Duration.ofSeconds(9), s.timeout(), "an option given only before still counts");
  }

  @Test
  void theEndpointComesFromTheEnvironmentWhenNoFlagNamesOne() {
    assertEquals("10.0.0.5:9000", settings(VARIABLE, "ls").endpoint());
    assertEquals(ConnectionOptions.ENDPOINT_VARIABLE, settings(VARIABLE, "ls").endpointFrom());
    assertEquals("node1:8086", settings(VARIABLE, "ls", "--endpoint", "node1:8086").endpoint(), "a flag wins");
    assertEquals("node1:8086", settings(VARIABLE, "--endpoint", "node1:8086", "ls").endpoint(),
        "a flag before the command wins too");
    assertEquals(TabulaClient.DEFAULT_ENDPOINT, settings(Map.of(ConnectionOptions.ENDPOINT_VARIABLE, " "), "ls")
        .endpoint(), "a blank variable is no variable");
  }

  @Test
  void withoutFlagsOrVariableTheDefaultsApply() {
    ConnectionOptions.Settings s = settings(NO_VARIABLE, "read", "t");
    assertEquals(TabulaClient.DEFAULT_ENDPOINT, s.endpoint());
    assertNull(s.instance());
    assertEquals(ConnectionOptions.DEFAULT_TIMEOUT, s.timeout());
  }

  @Test
  void connectionOptionsBeforeACommandThatDoesNotConnectAreAUsageError() {
    CommandLine cl = new CommandLine(new Top());
    TabulaCommands.addTo(cl, NO_VARIABLE);
    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err, true));
    Top.SERVED.set(false);
    assertEquals(2, cl.execute("--endpoint", "node1:8086", "server"));
    assertTrue(err.toString().startsWith("--endpoint is an option of the data and admin commands; 'server' does "
        + "not take it"), err.toString());
    assertEquals(false, Top.SERVED.get(), "the command did not run");

    assertEquals(0, cl.execute("server"));
    assertTrue(Top.SERVED.get());
  }

  @Test
  void theTokenComesFromTheFlagElseTheEnvironmentAndIsNeverShown() {
    Map<String, String> env = Map.of(CredentialOptions.TOKEN_VARIABLE, "from-the-variable");
    CredentialOptions.Credentials fromEnv = settings(env, "ls").credentials();
    assertEquals("from-the-variable", fromEnv.token());
    assertEquals(CredentialOptions.TOKEN_VARIABLE, fromEnv.tokenFrom());
    assertEquals("from-the-flag", settings(env, "ls", "--token", "from-the-flag").credentials().token(), "a flag wins");
    assertEquals("before", settings(env, "--token", "before", "ls").credentials().token(), "before the command too");
    assertEquals("after", settings(env, "--token", "before", "ls", "--token", "after").credentials().token());
    assertNull(settings(Map.of(CredentialOptions.TOKEN_VARIABLE, " "), "ls").credentials().token(),
        "a blank variable is no variable");
    assertNull(settings(NO_VARIABLE, "ls").credentials().token());

    ConnectionOptions.Settings s = settings(env, "--tls-ca", "ca.pem", "ls", "--token", "from-the-flag");
    assertEquals(java.nio.file.Path.of("ca.pem"), s.credentials().tlsCa());
    assertFalse(s.toString().contains("from-the-flag"), s.toString());
    assertFalse(fromEnv.toString().contains("from-the-variable"), fromEnv.toString());
  }

  @Test
  void theHelpShowsNoToken() {
    for (String[] args : new String[][] {{"ls", "--help"}, {"nodes", "--help"}}) {
      CommandLine cl = new CommandLine(new Top());
      TabulaCommands.addTo(cl, Map.of(CredentialOptions.TOKEN_VARIABLE, "secret-in-the-variable"));
      StringWriter out = new StringWriter();
      cl.setOut(new PrintWriter(out, true));
      cl.setErr(new PrintWriter(new StringWriter(), true));
      cl.setExecutionStrategy(new CommandLine.RunLast());
      cl.execute(args);
      assertTrue(out.toString().contains("--token"), String.join(" ", args) + ": " + out);
      assertFalse(out.toString().contains("secret-in-the-variable"), out.toString());
    }
  }

  /** The credentials may come before a command that talks to a node over Management HTTP, not before others. */
  @Test
  void credentialsBeforeACommandThatTalksToNoNodeAreAUsageError() {
    CommandLine cl = new CommandLine(new Top());
    TabulaCommands.addTo(cl, NO_VARIABLE);
    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err, true));
    Top.SERVED.set(false);
    assertEquals(2, cl.execute("--token", "secret-token", "server"));
    assertTrue(err.toString().startsWith("--token is an option of the commands that talk to a node; 'server' does "
        + "not take it"), err.toString());
    assertFalse(err.toString().contains("secret-token"), err.toString());
    assertEquals(false, Top.SERVED.get(), "the command did not run");

    CommandLine.ParseResult nodes = cl.parseArgs("--tls-ca", "ca.pem", "--token", "t", "nodes");
    ClusterCommands.HttpCommand command = (ClusterCommands.HttpCommand) nodes.subcommand().commandSpec().userObject();
    CredentialOptions.Credentials c = command.credentials.resolve(TabulaCommands.before(command.spec,
        TabulaCommands.CREDENTIALS_MIXIN, CredentialOptions.class));
    assertEquals(java.nio.file.Path.of("ca.pem"), c.tlsCa());
    assertEquals("t", c.token());
  }
}
