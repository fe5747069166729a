package io.tabula.persistence.storage;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;

/** An immutable file read by position. Thread-safe: positional reads need no shared cursor. */
public interface ReadableFile extends Closeable {
  String path();

  long size();

  /**
   * Reads exactly {@code len} bytes at {@code offset}.
   *
   * @throws EOFException if the file ends first
   */
  void readFully(long offset, byte[] dst, int off, int len) throws IOException;

  default byte[] readFully(long offset, int len) throws IOException {
    byte[] b = new byte[len];
    readFully(offset, b, 0, len);
    return b;
  }
}
