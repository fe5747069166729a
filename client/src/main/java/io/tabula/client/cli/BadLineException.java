package io.tabula.client.cli;

/**
 * A line of an import file that cannot be read: its number (from 1; for a CSV record that
 * spans lines, the line it starts on) and why. The reader that throws it has skipped the
 * line, so reading can go on after it.
 */
final class BadLineException extends Exception {
  private static final long serialVersionUID = 1L;

  private final long line;
  private final String reason;

  BadLineException(long line, String reason) {
    super("line " + line + ": " + reason);
    this.line = line;
    this.reason = reason;
  }

  long line() {
    return line;
  }

  String reason() {
    return reason;
  }
}
