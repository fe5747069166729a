package io.tabula.client.cli;

import java.util.Locale;

/** The file formats of import and export (docs/formats/import-export.md). */
enum Format {
  /** {@link CsvFormat}: a header {@code rowkey,family:qualifier,...}, then one row per record. */
  CSV,
  /** {@link JsonLinesFormat}: {@code {"key":"r1","cells":{"family:qualifier":"value"}}} per line. */
  JSONL;

  /**
   * {@code given} if not null, else the format the file name's extension names
   * ({@code .csv}; {@code .jsonl}, {@code .ndjson} or {@code .json}), else null.
   */
  static Format of(String fileName, Format given) {
    if (given != null) {
      return given;
    }
    String name = fileName.toLowerCase(Locale.ROOT);
    if (name.endsWith(".csv")) {
      return CSV;
    }
    if (name.endsWith(".jsonl") || name.endsWith(".ndjson") || name.endsWith(".json")) {
      return JSONL;
    }
    return null;
  }
}
