package io.tabula.client.cli;

import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The commands on one row: set, lookup, deleterow. */
final class RowCommands {
  private RowCommands() {}

  @Command(name = "set", mixinStandardHelpOptions = true,
      description = {"Sets cells of one row, atomically.", "Example:",
          "  tabula set webtable com.cnn.www anchor:cnnsi.com=CNN contents:=<html>"})
  static final class SetCells extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1", paramLabel = "ROW", description = "The row key.")
    String row;

    @Parameters(index = "2..*", arity = "1..*", paramLabel = "FAMILY:COLUMN=VALUE",
        description = "The cells to set; the value is everything after the first '='.")
    List<String> cells;

    @Option(names = "--timestamp", paramLabel = "MICROS",
        description = "The cells' timestamp in microseconds since the epoch (default: the node's time of the write).")
    Long timestamp;

    private RowMutation mutation;

    @Override
    void check() {
      if (row.isEmpty()) {
        throw usage("the row key must not be empty");
      }
      if (timestamp != null && timestamp < 0) {
        throw usage("--timestamp must not be negative, was " + timestamp);
      }
      mutation = RowMutation.create(row);
      for (String c : cells) {
        int eq = c.indexOf('=');
        int colon = c.indexOf(':');
        if (eq < 0 || colon < 0 || colon > eq) {
          throw usage("'" + c + "' is not of the form family:column=value");
        }
        String family = c.substring(0, colon);
        if (family.isEmpty()) {
          throw usage("'" + c + "' has no family");
        }
        String qualifier = c.substring(colon + 1, eq);
        String value = c.substring(eq + 1);
        if (timestamp == null) {
          mutation.setCell(family, qualifier, value);
        } else {
          mutation.setCell(family, qualifier, timestamp, value);
        }
      }
    }

    @Override
    int run(TabulaClient client) {
      Blocking.join(client.apply(table, mutation));
      return 0;
    }
  }

  @Command(name = "lookup", mixinStandardHelpOptions = true,
      description = {"Prints one row, as read does (nothing if the row has no cells).",
          "columns= takes family:qualifier or family, comma-separated; versions= the newest N of each column."})
  static final class Lookup extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1", paramLabel = "ROW", description = "The row key.")
    String row;

    @Parameters(index = "2..*", paramLabel = "columns=...|versions=N",
        description = "Which cells: columns=F:Q,F2 versions=N (cbt's cells-per-column=N also works).")
    List<String> args = List.of();

    private Query query;

    @Override
    void check() {
      if (row.isEmpty()) {
        throw usage("the row key must not be empty");
      }
      CbtArgs a = CbtArgs.parse(cmd(), args, Set.of("columns", "versions", "cells-per-column"),
          Set.of());
      query = Query.table(table).rowKey(row);
      a.columnsTo(query);
      a.versionsTo(query);
    }

    @Override
    int run(TabulaClient client) {
      RowPrinter printer = new RowPrinter(out());
      for (Row r : Blocking.join(client.readRows(query))) {
        printer.print(r);
      }
      return 0;
    }
  }

  @Command(name = "deleterow", mixinStandardHelpOptions = true,
      description = {"Deletes one row, every cell of it.", "A row that does not exist is no error."})
  static final class DeleteRow extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1", paramLabel = "ROW", description = "The row key.")
    String row;

    @Override
    void check() {
      if (row.isEmpty()) {
        throw usage("the row key must not be empty");
      }
    }

    @Override
    int run(TabulaClient client) {
      Blocking.join(client.apply(table, RowMutation.create(row).deleteRow()));
      return 0;
    }
  }
}
