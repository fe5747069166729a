package io.tabula.client.cli;

import io.tabula.client.Cell;
import io.tabula.client.Filter;
import io.tabula.client.Query;
import io.tabula.client.TabulaClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code tabula export}: writes a table's rows to a file that {@code tabula import} reads back. */
@Command(name = "export", mixinStandardHelpOptions = true,
    description = {"Writes the rows of a table to a file that import reads back.",
        "The file is CSV or JSON lines, as described in 'tabula import --help', with the newest value of "
            + "each column and no timestamps. A CSV export reads the table twice, first for the column names. "
            + "The file appears only once it is complete. Keys, qualifiers and values must be UTF-8 text.",
        "  prefix=P | start=ROW end=ROW   which rows (default every row)"})
final class ExportCommand extends ClientCommand {
  /** Rows between checks that the standard output still takes what is written. */
  private static final int CHECK_EVERY = 1_000;

  @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
  String table;

  @Parameters(index = "1", paramLabel = "FILE", description = "The file to write, or - for the standard output.")
  String file;

  @Parameters(index = "2..*", paramLabel = "prefix=P|start=ROW|end=ROW", description = "Which rows.")
  List<String> args = List.of();

  @Option(names = "--format", paramLabel = "csv|jsonl",
      description = "The file's format (default: from its extension; csv for -).")
  Format format;

  private CbtArgs rows;

  @Override
  void check() {
    format = Format.of(file, format);
    if (format == null && file.equals("-")) {
      format = Format.CSV;
    }
    if (format == null) {
      throw usage("cannot tell the format of '" + file + "' from its name; give --format csv or --format jsonl");
    }
    rows = CbtArgs.parse(cmd(), args, Set.of("prefix", "start", "end"), Set.of());
    query(); // a bad row range is a usage error before anything is connected or written
  }

  private Query query() {
    Query q = Query.table(table);
    rows.rowsTo(q);
    return q;
  }

  @Override
  int run(TabulaClient client) throws IOException {
    long start = System.nanoTime();
    List<String> columns = format == Format.CSV ? columns(client) : List.of();
    if (file.equals("-")) {
      long n = write(client, out(), columns, out());
      out().flush();
      if (out().checkError()) {
        throw new CommandFailedException("writing to the standard output failed after " + n + " rows");
      }
      return 0;
    }
    Path target = Path.of(file).toAbsolutePath();
    Path part = null;
    long n;
    try {
      part = Files.createTempFile(target.getParent(), target.getFileName() + ".", ".part");
      try (Writer w = Files.newBufferedWriter(part, StandardCharsets.UTF_8)) {
        n = write(client, w, columns, null);
      }
      Files.move(part, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw CommandFailedException.io("write", file, e);
    } finally {
      if (part != null) {
        Files.deleteIfExists(part);
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    out().println(String.format(Locale.ROOT, "exported %d rows to %s in %.1f s (%d rows/s)", n, file, seconds,
        seconds <= 0 ? 0 : Math.round(n / seconds)));
    return 0;
  }

  /** Every column name of the rows exported, family by family, from a first scan without values. */
  private List<String> columns(TabulaClient client) throws IOException {
    Set<String> columns = new TreeSet<>(Comparator.comparing(TextRow::family).thenComparing(TextRow::qualifier));
    Query q = query().versions(1).filter(Filter.stripValue());
    Blocking.forEach(client.scan(q), row -> {
      for (Cell c : row.cells()) {
        columns.add(TextRow.column(row, c));
      }
    });
    return List.copyOf(columns);
  }

  /** Writes the rows to {@code w}; {@code console}, if not null, is checked for a closed output. */
  private long write(TabulaClient client, Writer w, List<String> columns, PrintWriter console) throws IOException {
    RowFileWriter writer = format == Format.CSV ? CsvFormat.writer(w, columns) : JsonLinesFormat.writer(w);
    long[] n = {0};
    Blocking.forEach(client.scan(query().versions(1)), row -> {
      writer.write(TextRow.of(row));
      if (++n[0] % CHECK_EVERY == 0 && console != null && console.checkError()) {
        throw new CommandFailedException("writing to the standard output failed after " + n[0] + " rows");
      }
    });
    return n[0];
  }
}
