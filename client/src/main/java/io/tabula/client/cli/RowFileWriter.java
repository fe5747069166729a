package io.tabula.client.cli;

import java.io.IOException;

/** Writes rows to an export file, in the order given. Does not own its output; not thread-safe. */
interface RowFileWriter {
  void write(TextRow row) throws IOException;
}
