package io.tabula.persistence.storage;

import java.io.IOException;
import java.util.List;

/**
 * All file I/O of the engine goes through this interface (the paper's GFS; LevelDB's
 * {@code Env}), so tests can inject torn writes, failed fsyncs and a full disk.
 *
 * <p>Paths are relative, '/'-separated names under the storage root, such as
 * {@code "logs/node-1/000001.log"}. Parent folders are created as needed, except by {@link
 * #createNewInFolder} and by a rename within one folder: the commit log's files never make the
 * folder they go in, so a log folder that was removed stays removed (and reads as fenced).
 * Implementations are thread-safe.
 */
public interface Storage {
  /** Creates (or truncates) a file for appending. */
  WritableFile create(String path) throws IOException;

  /**
   * Creates a file for appending that must not exist yet.
   *
   * @throws java.nio.file.FileAlreadyExistsException if it exists (this default checks first, a
   *     check a concurrent creator can slip past; the file system's version is atomic)
   */
  default WritableFile createNew(String path) throws IOException {
    if (exists(path)) {
      throw new java.nio.file.FileAlreadyExistsException(path);
    }
    return create(path);
  }

  /**
   * Creates a file for appending that must not exist yet, in a folder that must exist: unlike
   * the other ways to create a file, this never makes a folder. The commit log makes its
   * segments this way, so a segment made after its folder was removed fails instead of making
   * the folder again, without the fence marker.
   *
   * @throws java.nio.file.FileAlreadyExistsException if the file exists
   * @throws java.nio.file.NoSuchFileException if its folder does not exist (this default checks
   *     first, a check a concurrent removal can slip past; the file system's version is atomic)
   */
  default WritableFile createNewInFolder(String path) throws IOException {
    String folder = parent(path);
    if (!folder.isEmpty() && !exists(folder)) {
      throw new java.nio.file.NoSuchFileException(folder, null, "no such folder to create " + path + " in");
    }
    return createNew(path);
  }

  /** Makes the folder {@code dir}, and every folder above it that is missing; nothing if it exists. */
  void createDirectories(String dir) throws IOException;

  /**
   * Whether {@link #overwrite} works here: whether a file's bytes can be written again in
   * place. A local disk can; HDFS appends only.
   */
  default boolean canOverwrite() {
    return false;
  }

  /**
   * Opens an existing file for writing over its bytes from {@code from} on, front to back,
   * keeping its length (writing past the end makes it longer). The commit log writes its
   * preallocated segments this way. Only where {@link #canOverwrite}.
   */
  default WritableFile overwrite(String path, long from) throws IOException {
    throw new UnsupportedOperationException("this storage cannot write a file in place: " + path);
  }

  /** Opens an existing file for positional reads. */
  ReadableFile open(String path) throws IOException;

  /**
   * Whether a file or folder of that name exists. False only for a name that is not there: an
   * error that keeps the answer from being known is thrown, never answered as false (a fence
   * that cannot be looked for must not read as no fence).
   *
   * @throws java.io.UncheckedIOException if whether it exists cannot be told
   */
  boolean exists(String path);

  /** Size in bytes of an existing file. */
  long size(String path) throws IOException;

  /**
   * When the file was last written, in milliseconds since the epoch, by the storage's clock.
   * The master's file sweep deletes only files this old by more than its grace period, judged
   * against the modification time of a file it writes itself (the storage's "now"), so a file
   * still being written is never taken; a storage may answer {@link Long#MAX_VALUE} for a file
   * that is open for writing. This default says "just now", so a storage that cannot tell
   * keeps every file.
   */
  default long modifiedMillis(String path) throws IOException {
    return System.currentTimeMillis();
  }

  /**
   * Names (not paths) of the entries directly under {@code dir}, sorted; empty if there is no
   * folder of that name. Any other error is thrown, never read as an empty folder (a recovery
   * would then drop a log that holds acknowledged writes).
   */
  List<String> list(String dir) throws IOException;

  /** Deletes a file, or an empty folder, if it exists; a folder that is not empty is an error. */
  void delete(String path) throws IOException;

  /**
   * Atomically replaces {@code to} with {@code from}. Makes {@code to}'s folder if it is missing,
   * unless it is {@code from}'s own folder: a rename within a folder never makes the folder.
   */
  void rename(String from, String to) throws IOException;

  /**
   * Renames {@code from} to {@code to} unless {@code to} exists already, atomically with
   * respect to other such renames: of two processes publishing to one name, exactly one wins
   * and the other's {@code from} is deleted. Returns whether this call published it. Makes
   * {@code to}'s folder as {@link #rename} does. This
   * default checks first (a check-then-rename a concurrent publisher can slip into); the file
   * system's version uses a hard link, which fails if the name is taken.
   */
  default boolean renameIfAbsent(String from, String to) throws IOException {
    if (exists(to)) {
      delete(from);
      return false;
    }
    rename(from, to);
    return true;
  }

  /** Makes the directory's entries (creations, renames) durable. */
  void syncDirectory(String dir) throws IOException;

  /** The name of the marker that fences a commit-log folder ({@link #fence}): an empty file. */
  String FENCE_MARKER = "FENCED";

  /**
   * Fences the commit-log folder {@code dir}: once this returns, {@link #isFenced} answers
   * true for it, in every process that shares this storage. The writer of that folder checks
   * after each fsync and acknowledges nothing once fenced (docs/fencing.md), so a recovery that
   * reads the folder after this call sees every record ever acknowledged from it. This default
   * makes an empty, durable {@value #FENCE_MARKER} file in the folder: a path-based check,
   * which a writer still holding its segment open cannot miss. Idempotent.
   *
   * <p>A folder that does not exist (deleted after its fencer listed it) is made, holding only
   * the marker: a tombstone. (A missing folder reads as fenced anyway, and a log never makes its
   * folder again.) It does not stand for a log that was there: the caller decides what a
   * missing folder means before fencing.
   */
  default void fence(String dir) throws IOException {
    String marker = path(dir, FENCE_MARKER);
    if (exists(marker)) {
      return;
    }
    try (WritableFile f = create(marker)) {
      f.sync();
    }
    syncDirectory(dir);
  }

  /**
   * Whether the commit-log folder {@code dir} has been fenced ({@link #fence}), or does not
   * exist. A log's folder is made when the log opens and is never made again, so a folder
   * that is gone was removed (a later life of the node sweeping it, an operator) and nobody
   * will recover what is written there: its writer must acknowledge nothing more, as if
   * fenced. This default is two looks, the marker's and then, if there is none, the folder's.
   *
   * @throws java.io.UncheckedIOException if that cannot be told ({@link #exists})
   */
  default boolean isFenced(String dir) {
    return exists(path(dir, FENCE_MARKER)) || !exists(dir);
  }

  /** Joins path parts with '/'. */
  static String path(String first, String... more) {
    StringBuilder sb = new StringBuilder(first);
    for (String m : more) {
      if (!sb.isEmpty() && sb.charAt(sb.length() - 1) != '/') {
        sb.append('/');
      }
      sb.append(m);
    }
    return sb.toString();
  }

  /** The folder part of a path ("" for a top-level name). */
  static String parent(String path) {
    int i = path.lastIndexOf('/');
    return i < 0 ? "" : path.substring(0, i);
  }
}
