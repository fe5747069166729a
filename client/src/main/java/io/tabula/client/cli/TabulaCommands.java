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
 * wins; the endpoint defaults to {@code $BIGTABLE_EMULATOR_HOST}). Each command that talks
 * to a node, the cluster's over Management HTTP too, takes {@code --tls-ca FILE} and {@code
 * --token TOKEN} likewise ({@link CredentialOptions}; the token defaults to {@code
 * $TABULA_TOKEN}). A command prints its result on the command line's output writer, and
 * throws on failure: a
 * {@link CommandLine.ParameterException} for a usage mistake, the client's
 * {@code TabulaException} or another exception whose message is the one line to show. The
 * execution-exception handler is the caller's to install.
 */
public final class TabulaCommands {
  /** The name of the connection options' mixin on the top-level command. */
  static final String CONNECTION_MIXIN = "connection";
  /** The name of the credential options' mixin ({@code --tls-ca}, {@code --token}) on the top-level one. */
  static final String CREDENTIALS_MIXIN = "credentials";

  private static final List<Class<?>> COMMANDS = List.of(AdminCommands.Ls.class, AdminCommands.CreateTable.class,
      AdminCommands.DeleteTable.class, AdminCommands.UpdateTable.class, AdminCommands.CreateFamily.class, AdminCommands.SetGcPolicy.class,
      AdminCommands.SetLocalityGroup.class, AdminCommands.LocalityGroups.class,
      RowCommands.SetCells.class, RowCommands.Lookup.class, ScanCommands.Read.class, ScanCommands.Count.class,
      WatchCommand.class,
      RowCommands.DeleteRow.class, ImportCommand.class, ExportCommand.class, ClusterCommands.Nodes.class,
      ClusterCommands.Tablets.class, ClusterCommands.Top.class, ClusterCommands.Move.class, ClusterCommands.Drain.class,
      IamCommand.class, BackupCommands.CreateBackup.class, BackupCommands.CopyBackup.class,
      BackupCommands.ListBackups.class,
      BackupCommands.UpdateBackup.class, BackupCommands.DeleteBackup.class, BackupCommands.Restore.class);

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
   * @param environment the variables the commands read ({@code BIGTABLE_EMULATOR_HOST},
   *     {@code TABULA_TOKEN}); tests pass their own
   */
  public static void addTo(CommandLine top, Map<String, String> environment) {
    for (Class<?> c : COMMANDS) {
      top.addSubcommand(c);
    }
    top.addMixin(CONNECTION_MIXIN, new ConnectionOptions(Map.copyOf(environment)));
    top.addMixin(CREDENTIALS_MIXIN, new CredentialOptions(Map.copyOf(environment)));
    CommandLine.IExecutionStrategy strategy = top.getExecutionStrategy();
    top.setExecutionStrategy(parsed -> {
      refuseMisplacedOptions(parsed);
      return strategy.execute(parsed);
    });
  }

  /**
   * The instance of the top-level mixin {@code name} above {@code spec} (the options given
   * before the command), or null if the command line has none.
   */
  static <T> T before(CommandSpec spec, String name, Class<T> type) {
    for (CommandSpec up = spec.parent(); up != null; up = up.parent()) {
      CommandSpec mixin = up.mixins().get(name);
      if (mixin != null && type.isInstance(mixin.userObject())) {
        return type.cast(mixin.userObject());
      }
    }
    return null;
  }

  /**
   * Throws if options of a top-level mixin were given before a command that does not take
   * them: connection options before one that does not connect, credentials before one that
   * talks to no node.
   */
  private static void refuseMisplacedOptions(ParseResult top) {
    if (!top.hasSubcommand()) {
      return;
    }
    ParseResult command = top.subcommand();
    while (command.hasSubcommand()) {
      command = command.subcommand();
    }
    Object user = command.commandSpec().userObject();
    refuse(top, command, CONNECTION_MIXIN, user instanceof ClientCommand, "the data and admin commands");
    boolean talksToANode = user instanceof ClientCommand || user instanceof ClusterCommands.HttpCommand;
    refuse(top, command, CREDENTIALS_MIXIN, talksToANode, "the commands that talk to a node");
  }

  private static void refuse(ParseResult top, ParseResult command, String mixinName, boolean takesThem,
      String whose) {
    CommandSpec mixin = top.commandSpec().mixins().get(mixinName);
    if (mixin == null || takesThem) {
      return;
    }
    for (CommandLine.Model.OptionSpec o : mixin.options()) {
      if (top.hasMatchedOption(o.longestName())) {
        throw new CommandLine.ParameterException(command.commandSpec().commandLine(), o.longestName()
            + " is an option of " + whose + "; '" + command.commandSpec().name() + "' does not take it");
      }
    }
  }
}
