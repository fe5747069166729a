package io.tabula.client.cli;

import io.tabula.client.TabulaClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code tabula import}: writes the rows of a CSV or JSON-lines file into a table. */
@Command(name = "import", mixinStandardHelpOptions = true,
    description = {"Writes the rows of a CSV or JSON-lines file into a table.",
        "The table and its column families must exist.",
        "",
        "CSV (.csv): a header whose first field names the row-key column and whose others are "
            + "family:qualifier, then one row per record, the row key first:",
        "  rowkey,anchor:cnnsi.com,contents:",
        "  com.cnn.www,CNN,\"<html>, quoted\"",
        "An unquoted empty field means no cell; \"\" is a cell with an empty value.",
        "",
        "JSON lines (.jsonl, .ndjson, .json): one object per line, exactly of this form:",
        "  {\"key\":\"com.cnn.www\",\"cells\":{\"anchor:cnnsi.com\":\"CNN\",\"contents:\":\"<html>\"}}",
        "",
        "All text is UTF-8. Every cell gets the same timestamp, the time the import starts. A line that "
            + "cannot be read stops the import (exit 1) after the rows before it were written, naming the "
            + "line; --skip-bad skips such lines and counts them instead. The last line printed gives the "
            + "rows imported, the seconds taken and the rows per second."})
final class ImportCommand extends ClientCommand {
  /** Bad lines described on the error stream with --skip-bad; the rest are only counted. */
  private static final int BAD_LINES_SHOWN = 10;

  @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
  String table;

  @Parameters(index = "1", paramLabel = "FILE", description = "The file to read, or - for the standard input.")
  String file;

  @Option(names = "--format", paramLabel = "csv|jsonl",
      description = "The file's format (default: from its extension).")
  Format format;

  @Option(names = "--skip-bad", description = "Skip lines that cannot be read, count them, and go on.")
  boolean skipBad;

  @Option(names = "--progress", negatable = true,
      description = "Show a progress bar on the error stream (default: when run interactively).")
  Boolean progress;

  @Option(names = "--batch-size", paramLabel = "N", defaultValue = "1000",
      description = "Rows per batch written (default ${DEFAULT-VALUE}).")
  int batchSize;

  @Override
  void check() {
    format = Format.of(file, format);
    if (format == null) {
      throw usage("cannot tell the format of '" + file + "' from its name; give --format csv or --format jsonl");
    }
    if (batchSize < 1 || batchSize > 100_000) {
      throw usage("--batch-size must be 1..100000, was " + batchSize);
    }
    if (!file.equals("-") && !Files.isRegularFile(Path.of(file))) {
      throw usage((Files.exists(Path.of(file)) ? "not a file: " : "no such file: ") + file);
    }
  }

  @Override
  int run(TabulaClient client) throws IOException {
    long timestamp = Instant.now().truncatedTo(ChronoUnit.MILLIS).toEpochMilli() * 1_000L;
    boolean stdin = file.equals("-");
    boolean show = progress != null ? progress : System.console() != null;
    ImportBatches batches = new ImportBatches(client, table, file, batchSize, timestamp);
    long skipped = 0;
    try (InputStream input = stdin ? System.in : Files.newInputStream(Path.of(file));
        RowFileReader reader = open(input)) {
      long size = stdin ? -1 : Files.size(Path.of(file));
      Progress bar = new Progress(err(), show, size, reader::consumed, System::nanoTime);
      long rows = 0;
      try {
        while (true) {
          TextRow row;
          try {
            row = reader.next();
          } catch (BadLineException e) {
            if (!skipBad) {
              batches.flush();
              throw new CommandFailedException(file + " " + e.getMessage() + " (the " + batches.written()
                  + " rows before it were imported; --skip-bad skips such lines)");
            }
            if (++skipped <= BAD_LINES_SHOWN) {
              bar.note("tabula: skipped " + file + " " + e.getMessage());
            }
            continue;
          }
          if (row == null) {
            break;
          }
          batches.add(row, reader.line());
          bar.update(++rows);
        }
        batches.flush();
      } finally {
        bar.finish(rows);
      }
      out().println(String.format(Locale.ROOT, "imported %d rows in %.1f s (%d rows/s)%s", batches.written(),
          bar.seconds(), bar.rate(batches.written()), skipped == 0 ? ""
              : "; skipped " + skipped + (skipped == 1 ? " bad line" : " bad lines")));
    } catch (IOException e) {
      throw CommandFailedException.io("read", file, e);
    }
    return 0;
  }

  private RowFileReader open(InputStream in) throws IOException {
    if (format == Format.JSONL) {
      return JsonLinesFormat.reader(in);
    }
    try {
      return CsvFormat.reader(in);
    } catch (BadLineException e) {
      throw new CommandFailedException(file + " " + e.getMessage() + " (nothing was imported)");
    }
  }
}
