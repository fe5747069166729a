package io.tabula.client.cli;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The progress of an import on one line of the error stream, redrawn in place at most five
 * times a second: a bar and a percentage when the input's size is known, the rows so far
 * and the rate. When not {@code visible} it draws nothing, and only the summary remains.
 * Not thread-safe.
 */
final class Progress {
  private static final long REDRAW_NANOS = 200_000_000L;
  private static final int BAR = 30;

  private final PrintWriter err;
  private final boolean visible;
  private final long totalBytes;
  private final LongSupplier bytes;
  private final LongSupplier nanoTime;
  private final long start;
  private long lastDraw;
  private int drawnWidth;
  private boolean finished;

  /**
   * @param totalBytes the size of the input, or a negative number if unknown
   * @param bytes how many bytes of the input have been consumed
   * @param nanoTime the clock, e.g. {@code System::nanoTime}
   */
  Progress(PrintWriter err, boolean visible, long totalBytes, LongSupplier bytes, LongSupplier nanoTime) {
    this.err = err;
    this.visible = visible;
    this.totalBytes = totalBytes;
    this.bytes = bytes;
    this.nanoTime = nanoTime;
    this.start = nanoTime.getAsLong();
    this.lastDraw = start;
  }

  /** Redraws the line if it is due. */
  void update(long rows) {
    if (visible && nanoTime.getAsLong() - lastDraw >= REDRAW_NANOS) {
      draw(rows);
    }
  }

  /** Prints {@code message} on a line of its own, above the progress line. */
  void note(String message) {
    if (drawnWidth > 0) {
      err.print("\r" + " ".repeat(drawnWidth) + "\r");
      drawnWidth = 0;
    }
    err.println(message);
    err.flush();
  }

  /** Draws the final state and ends the progress line, if one was shown. */
  void finish(long rows) {
    if (visible && !finished) {
      draw(rows);
      err.println();
      err.flush();
      drawnWidth = 0;
    }
    finished = true;
  }

  double seconds() {
    return (nanoTime.getAsLong() - start) / 1e9;
  }

  /** Rows per second since the start. */
  long rate(long rows) {
    double s = seconds();
    return s <= 0 ? 0 : Math.round(rows / s);
  }

  private void draw(long rows) {
    lastDraw = nanoTime.getAsLong();
    StringBuilder s = new StringBuilder();
    if (totalBytes > 0) {
      double done = Math.min(1.0, bytes.getAsLong() / (double) totalBytes);
      int filled = (int) Math.round(done * BAR);
      s.append('[').append("#".repeat(filled)).append(".".repeat(BAR - filled)).append(']')
          .append(String.format(Locale.ROOT, " %3d%%  ", Math.round(done * 100)));
    }
    s.append(String.format(Locale.ROOT, "%,d rows  %,d rows/s", rows, rate(rows)));
    int width = s.length();
    if (width < drawnWidth) {
      s.append(" ".repeat(drawnWidth - width));
    }
    err.print("\r" + s);
    err.flush();
    drawnWidth = width;
  }
}
