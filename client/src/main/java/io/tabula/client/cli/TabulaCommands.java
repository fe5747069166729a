package io.tabula.client.cli;

import java.util.List;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine;

/**
 * The cbt-like data and admin commands of the {@code tabula} command line, for the
 * program that owns the top-level command to add:
 * <pre>{@code
 * CommandLine cl = new CommandLine(new Main());
 * TabulaCommands.addTo(cl, System.getenv());
 * }</pre>
 * Each command takes {@code --endpoint host:port}, {@code --instance project/instance}
 * and {@code --timeout}, before the command or after it ({@link ConnectionOptions}: after
 * wins; the endpoint defaults to {@code $BIGTABLE_EMULATOR_HOST}), prints its result on the
 * command line's output writer, and throws on failure: a
 * {@link CommandLine.ParameterException} for a usage mistake, the client's
 * {@code TabulaException} or another exception whose message is the one line to show. The
 * execution-exception handler is the caller's to install.
 */
public final class TabulaCommands {
  /** The name of the connection options' mixin on the top-level command. */
  static final String CONNECTION_MIXIN = "connection";

  private static final List<Class<?>> COMMANDS = List.of(AdminCommands.Ls.class, AdminCommands.CreateTable.class,
      AdminCommands.DeleteTable.class, AdminCommands.CreateFamily.class, AdminCommands.SetGcPolicy.class,
      AdminCommands.SetLocalityGroup.class, AdminCommands.LocalityGroups.class,
      RowCommands.SetCells.class, RowCommands.Lookup.class, ScanCommands.Read.class, ScanCommands.Count.class,
      RowCommands.DeleteRow.class, ImportCommand.class, ExportCommand.class, ClusterCommands.Nodes.class,
      ClusterCommands.Tablets.class, ClusterCommands.Top.class, ClusterCommands.Move.class, ClusterCommands.Drain.class);

  private TabulaCommands() {}

  /** {@link #addTo(CommandLine, Map)} in this process's environment. */
  public static void addTo(CommandLine top) {
    addTo(top, System.getenv());
  }

  /**
   * Adds every command as a subcommand of {@code top}, in a sensible order for its help, and
   * the connection options to {@code top} itself, so they may come before the command.
   * Connection options given before a command of {@code top}'s that is not one of these
   * ({@code tabula --endpoint h:p server}) are a usage error rather than silently ignored:
   * {@code top}'s execution strategy is wrapped to check that, so set another one first.
   *
   * @param environment the variables the commands read ({@code BIGTABLE_EMULATOR_HOST});
   *     tests pass their own
   */
  public static void addTo(CommandLine top, Map<String, String> environment) {
    for (Class<?> c : COMMANDS) {
      top.addSubcommand(c);
    }
    top.addMixin(CONNECTION_MIXIN, new ConnectionOptions(Map.copyOf(environment)));
    CommandLine.IExecutionStrategy strategy = top.getExecutionStrategy();
    top.setExecutionStrategy(parsed -> {
      refuseMisplacedOptions(parsed);
      return strategy.execute(parsed);
    });
  }

  /** Throws if options of the top-level connection mixin were given before a command that does not connect. */
  private static void refuseMisplacedOptions(ParseResult top) {
    CommandSpec mixin = top.commandSpec().mixins().get(CONNECTION_MIXIN);
    if (mixin == null || !top.hasSubcommand()) {
      return;
    }
    ParseResult command = top.subcommand();
    while (command.hasSubcommand()) {
      command = command.subcommand();
    }
    if (command.commandSpec().userObject() instanceof ClientCommand) {
      return;
    }
    for (CommandLine.Model.OptionSpec o : mixin.options()) {
      if (top.hasMatchedOption(o.longestName())) {
        throw new CommandLine.ParameterException(command.commandSpec().commandLine(), o.longestName()
            + " is an option of the data and admin commands; '" + command.commandSpec().name() + "' does not take it");
      }
    }
  }
}
