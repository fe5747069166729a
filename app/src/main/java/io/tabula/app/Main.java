package io.tabula.app;

import io.tabula.client.cli.TabulaCommands;
import io.tabula.cluster.PostgresSchemaCommand;
import io.tabula.cluster.ServerCommand;
import io.tabula.cluster.TabulaNode;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code tabula} command line, run by {@code bin/tabula}. Subcommands hang off
 * {@link Main}: {@code server} ({@link ServerCommand}, from the node's module), which runs a
 * single node in the foreground, and the cbt-like data and admin commands of
 * {@link TabulaCommands} ({@code createtable}, {@code ls}, {@code set}, {@code read},
 * {@code import}, ...), which talk to a running node through the Java client and take their
 * connection options before or after the command. Every failure is one line on the error
 * stream, {@code tabula: <message>}.
 *
 * <p>This module is the program: it depends on the node and on the client, which do not
 * depend on each other, and it holds the program's logging configuration.
 */
@Command(name = "tabula", mixinStandardHelpOptions = true, version = "Tabula 0.1.0-SNAPSHOT",
    description = "An open-source Bigtable serving the Cloud Bigtable v2 gRPC API.",
    footer = {"", "The connection options may come before a data or admin command, as cbt",
        "takes them, or after it; given in both places, the one after the command",
        "wins. Without --endpoint the node is $BIGTABLE_EMULATOR_HOST if set, else",
        "127.0.0.1:8086."},
    subcommands = {ServerCommand.class, PostgresSchemaCommand.class})
public final class Main implements Runnable {
  /** Exit code for bad flags or arguments, or a bad configuration file. */
  static final int USAGE = 2;
  /** Exit code when the node could not start or a command's operation failed. */
  static final int FAILED = 1;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    TabulaNode.widenCommonPool();
    CommandLine cl = commandLine();
    // Rows and exports are UTF-8 whatever the platform's console encoding is.
    cl.setOut(new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
    cl.setErr(new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true));
    int code = cl.execute(args);
    cl.getOut().flush();
    // The node's threads (storage engine, JDBC pool, gRPC) need not all be daemons: leave
    // explicitly once the command is done. During a SIGTERM this blocks until the shutdown
    // hooks (coordinated shutdown among them) have finished, and the JVM then exits.
    System.exit(code);
  }

  /** The command line in this process's environment. */
  public static CommandLine commandLine() {
    return commandLine(System.getenv());
  }

  /**
   * The command line with its subcommands and error handlers, reading
   * {@code BIGTABLE_EMULATOR_HOST} from {@code environment}; tests run it with their own
   * environment and writers.
   */
  public static CommandLine commandLine(Map<String, String> environment) {
    CommandLine cl = new CommandLine(new Main());
    TabulaCommands.addTo(cl, environment);
    cl.addSubcommand("help", new CommandLine.HelpCommand());
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    cl.setParameterExceptionHandler((ex, args) -> {
      CommandLine cmd = ex.getCommandLine();
      PrintWriter err = cmd.getErr();
      err.println("tabula: " + ex.getMessage() + " (see '" + cmd.getCommandSpec().qualifiedName() + " --help')");
      err.flush();
      return USAGE;
    });
    cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
      PrintWriter err = cmd.getErr();
      err.println("tabula: " + describe(ex));
      err.flush();
      return FAILED;
    });
    return cl;
  }

  private static String describe(Throwable ex) {
    Throwable t = ex;
    while ((t instanceof ExecutionException || t instanceof CompletionException || t.getMessage() == null)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a command is required, e.g. 'tabula server'");
  }
}
