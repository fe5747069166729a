package io.tabula.client.cli;

import java.util.List;
import picocli.CommandLine;

/**
 * The cbt-like data and admin commands of the {@code tabula} command line, for the
 * program that owns the top-level command to add:
 * <pre>{@code
 * CommandLine cl = new CommandLine(new Main());
 * TabulaCommands.addTo(cl);
 * }</pre>
 * Each command takes {@code --endpoint host:port}, {@code --instance project/instance}
 * and {@code --timeout}, prints its result on the command line's output writer, and
 * throws on failure: a {@link CommandLine.ParameterException} for a usage mistake, the
 * client's {@code TabulaException} or another exception whose message is the one line
 * to show. The execution-exception handler is the caller's to install.
 */
public final class TabulaCommands {
  private static final List<Class<?>> COMMANDS = List.of(AdminCommands.Ls.class, AdminCommands.CreateTable.class,
      AdminCommands.DeleteTable.class, AdminCommands.CreateFamily.class, AdminCommands.SetGcPolicy.class,
      RowCommands.SetCells.class, RowCommands.Lookup.class, ScanCommands.Read.class, ScanCommands.Count.class,
      RowCommands.DeleteRow.class, ImportCommand.class, ExportCommand.class);

  private TabulaCommands() {}

  /** Adds every command as a subcommand of {@code top}, in a sensible order for its help. */
  public static void addTo(CommandLine top) {
    for (Class<?> c : COMMANDS) {
      top.addSubcommand(c);
    }
  }
}
