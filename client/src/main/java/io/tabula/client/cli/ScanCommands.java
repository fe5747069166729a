package io.tabula.client.cli;

import io.tabula.client.Filter;
import io.tabula.client.Query;
import io.tabula.client.TabulaClient;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** The commands that scan a table: read and count. */
final class ScanCommands {
  private ScanCommands() {}

  @Command(name = "read", mixinStandardHelpOptions = true,
      description = {"Prints rows, in key order unless reversed.",
          "Each row is a line of dashes and the row key, then per cell '  family:qualifier @ time' (UTC) "
              + "and the value quoted on the next line. Arguments:",
          "  start=ROW end=ROW   rows in [start, end)",
          "  prefix=P            rows whose key starts with P (not with start/end)",
          "  columns=F:Q,F2      only these columns (F:Q) and families (F)",
          "  versions=N          the newest N versions of each column",
          "  cells-per-column=N  the same, as cbt spells it",
          "  count=N             at most N rows",
          "  reversed            in descending key order",
          "Example:",
          "  tabula read webtable prefix=com.cnn. columns=anchor versions=1 count=10"})
  static final class Read extends ClientCommand {
    private static final Set<String> KEYS = Set.of("start", "end", "prefix", "columns", "versions",
        "cells-per-column", "count");

    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1..*", paramLabel = "KEY=VALUE", description = "What to read, as listed above.")
    List<String> args = List.of();

    private Query query;

    @Override
    void check() {
      CbtArgs a = CbtArgs.parse(cmd(), args, KEYS, Set.of("reversed"));
      query = Query.table(table);
      a.rowsTo(query);
      a.columnsTo(query);
      a.versionsTo(query);
      long count = a.positive("count");
      if (count > 0) {
        query.limit(count);
      }
      if (a.flag("reversed")) {
        query.reversed();
      }
    }

    @Override
    int run(TabulaClient client) throws IOException {
      RowPrinter printer = new RowPrinter(out());
      Blocking.forEach(client.scan(query), printer::print);
      return 0;
    }
  }

  @Command(name = "count", mixinStandardHelpOptions = true,
      description = {"Prints the number of rows of a table, or of a part of it.",
          "The node sends back only the first cell of each row, without its value."})
  static final class Count extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1..*", paramLabel = "prefix=P|start=ROW|end=ROW",
        description = "Which rows: prefix=P, or start=ROW and/or end=ROW (end exclusive).")
    List<String> args = List.of();

    private Query query;

    @Override
    void check() {
      CbtArgs a = CbtArgs.parse(cmd(), args, Set.of("prefix", "start", "end"), Set.of());
      query = Query.table(table).filter(Filter.chain(Filter.cellsPerRow(1), Filter.stripValue()));
      a.rowsTo(query);
    }

    @Override
    int run(TabulaClient client) throws IOException {
      out().println(Blocking.forEach(client.scan(query), row -> { }));
      return 0;
    }
  }
}
