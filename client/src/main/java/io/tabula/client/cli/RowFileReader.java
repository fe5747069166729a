package io.tabula.client.cli;

import java.io.Closeable;
import java.io.IOException;

/** Reads the rows of an import file one at a time. Owns its input; not thread-safe. */
abstract class RowFileReader implements Closeable {
  final ByteInput in;

  RowFileReader(ByteInput in) {
    this.in = in;
  }

  /**
   * The next row, or null at the end of the input.
   *
   * @throws BadLineException for a line that cannot be read; it has been skipped, and the
   *     next call goes on after it
   */
  abstract TextRow next() throws IOException, BadLineException;

  /** The line the last row returned started on (from 1). */
  abstract long line();

  /** Bytes of the input consumed so far. */
  final long consumed() {
    return in.consumed();
  }

  @Override
  public final void close() throws IOException {
    in.close();
  }
}
