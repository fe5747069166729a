package io.tabula.persistence.storage;

import java.io.IOException;

/**
 * Stored bytes failed a check (checksum, magic number, structure). Names the file, the
 * byte offset where the bad data starts, and why; corrupt bytes are never returned as data.
 */
public final class CorruptionException extends IOException {
  private static final long serialVersionUID = 1L;
  private final String file;
  private final long offset;

  public CorruptionException(String file, long offset, String reason) {
    super("corruption in " + file + " at offset " + offset + ": " + reason);
    this.file = file;
    this.offset = offset;
  }

  public String file() {
    return file;
  }

  public long offset() {
    return offset;
  }
}
