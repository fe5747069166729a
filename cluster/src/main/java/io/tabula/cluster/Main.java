package io.tabula.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import io.tabula.client.cli.TabulaCommands;
import java.io.File;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code tabula} command line. Subcommands hang off {@link Main}: {@code server}, which
 * runs a single node in the foreground until it is told to stop (SIGTERM or Ctrl-C run
 * Pekko coordinated shutdown through its JVM shutdown hook), and the cbt-like data and
 * admin commands of {@link TabulaCommands} ({@code createtable}, {@code ls}, {@code set},
 * {@code read}, {@code import}, ...), which talk to a running node through the Java client.
 * Every failure is one line on the error stream, {@code tabula: <message>}.
 */
@Command(name = "tabula", mixinStandardHelpOptions = true, version = "Tabula 0.1.0-SNAPSHOT",
    description = "An open-source Bigtable serving the Cloud Bigtable v2 gRPC API.",
    subcommands = {Main.Server.class})
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

  /** The command line with its subcommands and error handlers; tests run it with their own writers. */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Main());
    TabulaCommands.addTo(cl);
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

  /** {@code tabula server}: runs one node in the foreground. */
  @Command(name = "server", mixinStandardHelpOptions = true,
      description = "Runs a Tabula node serving the Cloud Bigtable API until SIGTERM or Ctrl-C.")
  static final class Server implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--port", paramLabel = "N",
        description = "gRPC port of the Cloud Bigtable API (default 8086; 0 picks a free port).")
    Integer port;

    @Option(names = "--http-port", paramLabel = "N",
        description = "Pekko Management HTTP port (default 8558; 0 picks a free port).")
    Integer httpPort;

    @Option(names = "--data", paramLabel = "DIR", description = "Data directory (default ./tabula-data).")
    File data;

    @Option(names = "--config", paramLabel = "FILE",
        description = "HOCON file layered over the defaults; the flags above override it.")
    File config;

    @Override
    public Integer call() throws Exception {
      Config effective = configuration();
      TabulaNode node = TabulaNode.start(effective);
      NodeSettings s = node.settings();
      System.out.println("Tabula serving the Cloud Bigtable API on " + s.host() + ":" + node.grpcPort()
          + " (data in " + s.dataDir() + ")");
      System.out.flush();
      // Blocks until the actor system has terminated: coordinated shutdown (run by Pekko's
      // JVM shutdown hook on SIGTERM / Ctrl-C) unbinds the API and flushes the memtables.
      node.system().getWhenTerminated().toCompletableFuture().get();
      return 0;
    }

    Config configuration() {
      Map<String, Object> flags = new HashMap<>();
      if (port != null) {
        flags.put("tabula.node.grpc-port", port);
      }
      if (httpPort != null) {
        flags.put("tabula.node.http-port", httpPort);
      }
      if (data != null) {
        flags.put("tabula.node.data-dir", data.getPath());
      }
      Config base = ConfigFactory.empty();
      if (config != null) {
        if (!config.isFile()) {
          throw new CommandLine.ParameterException(spec.commandLine(), "--config: no such file: " + config);
        }
        try {
          base = ConfigFactory.parseFile(config).withFallback(base);
        } catch (ConfigException e) {
          throw new CommandLine.ParameterException(spec.commandLine(), "--config: " + e.getMessage());
        }
      }
      return ConfigFactory.parseMap(flags).withFallback(base);
    }
  }
}
