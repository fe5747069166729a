package io.tabula.persistence.tablet;

import io.tabula.persistence.model.Row;
import io.tabula.persistence.read.RowReader;
import java.io.Closeable;
import java.io.IOException;

/**
 * A lazy scan over a tablet snapshot: one row in memory at a time, SSTable blocks read as
 * the cursor reaches them. Pins the tablet version it reads until {@link #close()}. Not
 * thread-safe.
 */
public final class RowScanner implements Closeable {
  private final RowReader reader;
  private TabletVersion version;

  RowScanner(RowReader reader, TabletVersion version) {
    this.reader = reader;
    this.version = version;
  }

  /** The next row, or null at the end of the range. */
  public Row next() throws IOException {
    if (version == null) {
      throw new IllegalStateException("scanner is closed");
    }
    return reader.next();
  }

  @Override
  public void close() throws IOException {
    if (version != null) {
      try {
        reader.close();
      } finally {
        version.release();
        version = null;
      }
    }
  }
}
