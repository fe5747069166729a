package io.tabula.client.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tabula.client.TabulaClient;
import io.tabula.client.TabulaException;
import io.tabula.protocol.errors.ErrorCode;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.ActorSystem;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A command that talks to a node: checks its arguments first (a mistake is a usage
 * error, exit 2, before any connection is made), then runs with a client in an actor
 * system of its own, and closes both afterwards. A node it cannot reach is told as
 * {@code cannot reach Tabula at host:port (...)}, decided by the failure's type
 * ({@link TabulaException#isConnectionFailure}); one whose certificate it does not trust
 * is named too, and a refusal of the call's credentials says where a token comes from.
 * Results go to the command line's output writer; a failure is thrown and reported by the
 * command line's handler as one line (exit 1).
 */
abstract class ClientCommand implements Callable<Integer> {
  @Mixin
  ConnectionOptions connection;

  @Mixin
  CredentialOptions credentials;

  @Spec
  CommandSpec spec;

  /** Reads and checks the arguments; throws {@link CommandLine.ParameterException} for a mistake. */
  void check() {}

  /** Does the work; returns the exit code. */
  abstract int run(TabulaClient client) throws IOException;

  /**
   * The connection this command runs with: its own options, over those given before it on
   * the command line (the options of an enclosing command that took them), over the
   * environment and the defaults.
   */
  ConnectionOptions.Settings settings() {
    return connection.resolve(TabulaCommands.before(spec, TabulaCommands.CONNECTION_MIXIN, ConnectionOptions.class),
        credentials.resolve(TabulaCommands.before(spec, TabulaCommands.CREDENTIALS_MIXIN, CredentialOptions.class)));
  }

  @Override
  public final Integer call() throws IOException {
    check();
    ConnectionOptions.Settings settings = settings();
    ActorSystem system = ActorSystem.create("tabula-cli", quiet());
    try (TabulaClient client = settings.connect(spec.commandLine(), system)) {
      int code = run(client);
      out().flush();
      return code;
    } catch (TabulaException e) {
      if (e.isCertificateRejected()) {
        throw e.withDescription("Tabula at " + settings.endpoint() + ": " + e.description());
      }
      if (e.isConnectionFailure()) {
        throw cannotReach(e, settings.endpoint());
      }
      throw e.reason().orElse(null) == ErrorCode.UNAUTHENTICATED ? e.withDescription(e.description() + " ("
          + CredentialOptions.TOKEN_HINT + ")") : e;
    } finally {
      system.terminate();
      awaitTermination(system);
    }
  }

  /** {@code e} saying which endpoint could not be reached. */
  private static TabulaException cannotReach(TabulaException e, String endpoint) {
    return e.withDescription("cannot reach Tabula at " + endpoint + " (" + e.description() + ")");
  }

  /**
   * A local actor system that logs nothing at all: the command's result is its output and
   * its failure the one line the command line prints, so Pekko's own warnings (a refused
   * connection, a dead letter) would only be noise around them.
   */
  private static Config quiet() {
    return ConfigFactory.parseString("""
        pekko.actor.provider = local
        pekko.use-slf4j = off
        pekko.loggers = ["org.apache.pekko.event.Logging$DefaultLogger"]
        pekko.logging-filter = "org.apache.pekko.event.DefaultLoggingFilter"
        pekko.loglevel = OFF
        pekko.stdout-loglevel = OFF
        pekko.log-dead-letters = off
        pekko.log-dead-letters-during-shutdown = off
        pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        """).withFallback(ConfigFactory.load());
  }

  private static void awaitTermination(ActorSystem system) {
    try {
      system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // The command's outcome is decided; a slow shutdown of its actor system does not change it.
    }
  }

  CommandLine cmd() {
    return spec.commandLine();
  }

  PrintWriter out() {
    return spec.commandLine().getOut();
  }

  PrintWriter err() {
    return spec.commandLine().getErr();
  }

  CommandLine.ParameterException usage(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }
}
