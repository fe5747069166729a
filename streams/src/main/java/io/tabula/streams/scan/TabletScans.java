package io.tabula.streams.scan;

import io.tabula.persistence.model.Row;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.tablet.RowScanner;
import io.tabula.persistence.tablet.Tablet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Engine scans as back-pressured sources: a row is read from disk only when downstream
 * asks for it, so a slow consumer holds the scan to a few rows (plus one data block per
 * SSTable in the merge), and cancelling closes the scanner and unpins its files.
 *
 * <p>The reads run on Pekko Streams' blocking-I/O dispatcher ({@code unfoldResource}'s
 * default), never on an actor's thread.
 */
public final class TabletScans {
  /** Rows emitted by forward scans since start, all tablets; for measurements (benchmarks) only. */
  public static final LongAdder ROWS_EMITTED = new LongAdder();

  /** Key, qualifier and value bytes of the rows counted in {@link #ROWS_EMITTED}; for measurements only. */
  public static final LongAdder BYTES_EMITTED = new LongAdder();

  private TabletScans() {}

  /**
   * Rows of {@code tablet} in {@code [start, end)} (empty bounds are open), in key order.
   * The snapshot is taken now, on the caller's thread, so a split or close of the tablet
   * after this returns does not affect the stream; the scanner is closed when the stream
   * completes, fails or is cancelled.
   *
   * @throws io.tabula.persistence.tablet.TabletUnavailableException if the tablet is closed
   */
  public static Source<Row, NotUsed> rows(Tablet tablet, byte[] start, byte[] end, ReadFilter filter) {
    return rowsInFews(tablet, start, end, filter).mapConcat(rows -> rows);
  }

  /**
   * The same rows a few at a time (up to 64 rows or about 32 KiB of keys and values per
   * list, never empty), as they cross from the I/O dispatcher to the consumer: one
   * hand-over per row cost more than reading the row.
   */
  public static Source<List<Row>, NotUsed> rowsInFews(Tablet tablet, byte[] start, byte[] end, ReadFilter filter) {
    RowScanner scanner = open(tablet, start, end, filter);
    return Source.unfoldResource(() -> scanner, TabletScans::nextFew, TabletScans::close);
  }

  /** Most rows, and about the most key and value bytes, read ahead in one hand-over. */
  private static final int FEW_ROWS = 64;
  private static final long FEW_BYTES = 32 * 1024;

  /** The next rows, up to {@link #FEW_ROWS} or {@link #FEW_BYTES}; empty at the end. */
  private static Optional<List<Row>> nextFew(RowScanner s) {
    List<Row> rows = new ArrayList<>();
    long bytes = 0;
    try {
      for (Row r; rows.size() < FEW_ROWS && bytes < FEW_BYTES && (r = s.next()) != null; ) {
        rows.add(r);
        bytes += bytesOf(r);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ROWS_EMITTED.add(rows.size());
    BYTES_EMITTED.add(bytes);
    return rows.isEmpty() ? Optional.empty() : Optional.of(rows);
  }

  /**
   * The same rows in descending key order. The engine reads forward only, so the tablet's
   * rows in range are gathered first and then emitted backwards: memory grows with the
   * range, which is what a reversed scan over a large range costs here.
   */
  public static Source<Row, NotUsed> rowsReversed(Tablet tablet, byte[] start, byte[] end, ReadFilter filter) {
    RowScanner s = open(tablet, start, end, filter);
    return Source.unfoldResource(() -> {
      List<Row> rows = new ArrayList<>();
      try {
        for (Row r = s.next(); r != null; r = s.next()) {
          rows.add(r);
        }
      } finally {
        s.close();
      }
      Collections.reverse(rows);
      return rows.iterator();
    }, it -> it.hasNext() ? Optional.of(it.next()) : Optional.empty(), it -> {});
  }

  private static RowScanner open(Tablet tablet, byte[] start, byte[] end, ReadFilter filter) {
    try {
      return tablet.scan(start, end, filter);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Key, qualifier and value bytes of a row. */
  private static long bytesOf(Row r) {
    long bytes = r.key().length;
    for (var c : r.cells()) {
      bytes += c.qualifier().length + c.value().length;
    }
    return bytes;
  }

  private static void close(RowScanner s) {
    try {
      s.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
