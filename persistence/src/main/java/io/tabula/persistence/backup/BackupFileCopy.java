package io.tabula.persistence.backup;

import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;

/**
 * Copies one SSTable of a backup from one storage root to another (docs/backups.md,
 * "Copying"), checked: the CRC32C of the bytes read from the source, computed as they are
 * copied, must equal the CRC32C of the destination's bytes read back after the copy was synced,
 * and the source must be as long as the backup's manifest says. Streams {@value #CHUNK} bytes
 * at a time: one buffer per copy, whatever the file's size. A copy that fails leaves the
 * destination file for the caller to delete (it knows which it made). Stateless; each call
 * owns its buffer.
 */
public final class BackupFileCopy {
  /** The bytes read and written at a time. */
  public static final int CHUNK = 1 << 20;

  private BackupFileCopy() {}

  /** What a copy was: its length and the CRC32C (Castagnoli) of its bytes. */
  public record Copied(long bytes, int crc32c) {}

  /**
   * Why a copy failed, for the caller to match by type (the message is for people).
   */
  public enum Problem {
    /** The source file is not as long as the manifest says: the source backup is damaged. */
    SOURCE_LENGTH,
    /** The bytes read back from the destination are not the bytes read from the source. */
    CHECKSUM,
    /** The copy ran past its deadline. */
    DEADLINE
  }

  /** A copy that failed for a {@link Problem}. */
  public static final class CopyFailedException extends IOException {
    private final Problem problem;

    public CopyFailedException(Problem problem, String message) {
      super(message);
      this.problem = problem;
    }

    public Problem problem() {
      return problem;
    }
  }

  /**
   * Copies {@code source} of {@code from} to {@code dest} of {@code to}, which must not exist;
   * {@code expectedBytes} is its length by the backup's manifest. Checks {@code nanoTime}
   * against {@code deadlineNanos} before each chunk.
   *
   * @throws CopyFailedException for a source of the wrong length, a checksum mismatch or the deadline
   */
  public static Copied copy(Storage from, String source, long expectedBytes, Storage to, String dest,
      LongSupplier nanoTime, long deadlineNanos) throws IOException {
    byte[] buf = new byte[CHUNK];
    CRC32C read = new CRC32C();
    long length;
    try (ReadableFile in = from.open(source)) {
      length = in.size();
      if (length != expectedBytes) {
        throw new CopyFailedException(Problem.SOURCE_LENGTH, source + " is " + length + " bytes; the backup's"
            + " manifest says " + expectedBytes);
      }
      try (WritableFile out = to.createNew(dest)) {
        for (long at = 0; at < length; ) {
          checkDeadline(nanoTime, deadlineNanos, source);
          int n = (int) Math.min(CHUNK, length - at);
          in.readFully(at, buf, 0, n);
          read.update(buf, 0, n);
          out.append(buf, 0, n);
          at += n;
        }
        out.sync();
      }
    }
    int sourceCrc = (int) read.getValue();
    int destCrc = crc32c(to, dest, buf, nanoTime, deadlineNanos);
    long written = to.size(dest);
    if (written != length || destCrc != sourceCrc) {
      throw new CopyFailedException(Problem.CHECKSUM, "the copy of " + source + " to " + dest + " reads back as "
          + written + " bytes with CRC32C " + Integer.toHexString(destCrc) + ", the source as " + length
          + " bytes with CRC32C " + Integer.toHexString(sourceCrc));
    }
    return new Copied(length, sourceCrc);
  }

  /** The CRC32C of {@code path}'s bytes, read through {@code buf}. */
  static int crc32c(Storage storage, String path, byte[] buf, LongSupplier nanoTime, long deadlineNanos)
      throws IOException {
    CRC32C crc = new CRC32C();
    try (ReadableFile in = storage.open(path)) {
      long length = in.size();
      for (long at = 0; at < length; ) {
        checkDeadline(nanoTime, deadlineNanos, path);
        int n = (int) Math.min(buf.length, length - at);
        in.readFully(at, buf, 0, n);
        crc.update(buf, 0, n);
        at += n;
      }
    }
    return (int) crc.getValue();
  }

  private static void checkDeadline(LongSupplier nanoTime, long deadlineNanos, String path)
      throws CopyFailedException {
    if (nanoTime.getAsLong() - deadlineNanos > 0) {
      throw new CopyFailedException(Problem.DEADLINE, "the copy ran out of time at " + path);
    }
  }
}
