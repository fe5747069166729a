package io.tabula.persistence.storage;

import java.io.Closeable;
import java.io.IOException;

/**
 * A file being written front to back. Not thread-safe: one writer at a time. Bytes
 * appended are durable only once {@link #sync()} has returned.
 */
public interface WritableFile extends Closeable {
  /** The path this file was created under. */
  String path();

  void append(byte[] b, int off, int len) throws IOException;

  default void append(byte[] b) throws IOException {
    append(b, 0, b.length);
  }

  /** Bytes appended so far (the offset of the next append). */
  long position();

  /**
   * Hands every byte appended so far out of this process, where its death (a crash, a kill, a
   * pause that outlives a fence) cannot lose it, though a power cut still may: to the operating
   * system, or to the storage's servers. The default does nothing: for a file whose {@link
   * #append} already gives its bytes to the operating system (a local file: {@code write(2)}).
   * HDFS overrides it with {@code hflush}, since its client keeps appended bytes in its own
   * buffer until a packet fills. {@link #sync} includes it.
   */
  default void flush() throws IOException {}

  /** Forces every appended byte to stable storage (fsync / fdatasync). */
  void sync() throws IOException;

  /**
   * Whether {@link #sync()} may be called from another thread while the writer appends (the
   * one exception to "one thread at a time"): then it forces at least what was appended
   * before it was called. False unless a storage says so.
   */
  default boolean syncsBesideAppends() {
    return false;
  }

  /** Cuts the file back to {@code size} bytes; the next append goes there. */
  void truncate(long size) throws IOException;
}
