package io.tabula.persistence.storage;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/** {@link Storage} on a local directory, through {@link FileChannel}. Thread-safe. */
public final class FileStorage implements Storage {
  private final Path root;

  public FileStorage(Path root) throws IOException {
    this.root = root.toAbsolutePath();
    Files.createDirectories(this.root);
  }

  public Path root() {
    return root;
  }

  /** The root folder's path, as errors and logs name this storage. */
  @Override
  public String toString() {
    return root.toString();
  }

  private Path resolve(String path) {
    if (path.startsWith("/") || path.contains("..")) {
      throw new IllegalArgumentException("storage path must be relative and stay under the root: " + path);
    }
    return root.resolve(path);
  }

  @Override
  public WritableFile create(String path) throws IOException {
    Path p = resolve(path);
    Files.createDirectories(p.getParent());
    FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING);
    return new ChannelWritableFile(path, ch);
  }

  @Override
  public WritableFile createNew(String path) throws IOException {
    Files.createDirectories(resolve(path).getParent());
    return createNewInFolder(path);
  }

  /** {@code O_CREAT|O_EXCL} in the folder as it is: a missing folder fails the open with ENOENT. */
  @Override
  public WritableFile createNewInFolder(String path) throws IOException {
    return new ChannelWritableFile(path, FileChannel.open(resolve(path), StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE));
  }

  @Override
  public void createDirectories(String dir) throws IOException {
    Files.createDirectories(resolve(dir));
  }

  @Override
  public boolean canOverwrite() {
    return true;
  }

  @Override
  public WritableFile overwrite(String path, long from) throws IOException {
    if (from < 0) {
      throw new IllegalArgumentException("from must be 0 or more, was " + from);
    }
    ChannelWritableFile f = new ChannelWritableFile(path, FileChannel.open(resolve(path), StandardOpenOption.WRITE));
    f.position = from;
    return f;
  }

  /**
   * Opens a file for reading. Files up to 2 GiB are memory-mapped: the engine's files are
   * immutable once written, and a mapped read is a copy with no system call, which is what
   * a block-cache miss costs. (The mapping goes when the garbage collector frees it, so a
   * deleted file's space may be held a little longer.)
   */
  @Override
  public ReadableFile open(String path) throws IOException {
    FileChannel ch = FileChannel.open(resolve(path), StandardOpenOption.READ);
    long size = ch.size();
    if (size > 0 && size <= Integer.MAX_VALUE) {
      try {
        return new MappedReadableFile(path, ch.map(FileChannel.MapMode.READ_ONLY, 0, size));
      } finally {
        ch.close();
      }
    }
    return new ChannelReadableFile(path, ch, size);
  }

  /**
   * Whether a file or folder of that name exists, following links. Only "no such file" (also:
   * a link to nothing) is an answer of false. Every other error of the look (EIO, EACCES,
   * ESTALE, ELOOP...) is thrown: {@link Files#exists} would answer false for those, and a fence
   * that cannot be looked for would read as no fence.
   *
   * @throws UncheckedIOException if whether it exists cannot be told
   */
  @Override
  public boolean exists(String path) {
    try {
      Files.readAttributes(resolve(path), BasicFileAttributes.class);
      return true;
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot tell whether " + path + " exists", e);
    }
  }

  @Override
  public long size(String path) throws IOException {
    return Files.size(resolve(path));
  }

  @Override
  public long modifiedMillis(String path) throws IOException {
    return Files.getLastModifiedTime(resolve(path)).toMillis();
  }

  /**
   * The names in the folder, sorted; empty if there is no folder of that name. Every other
   * error (EIO, EACCES, ELOOP, a file of that name...) is thrown, never read as an empty folder.
   */
  @Override
  public List<String> list(String dir) throws IOException {
    List<String> names = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(resolve(dir))) {
      s.forEach(x -> names.add(x.getFileName().toString()));
    } catch (NoSuchFileException e) {
      return List.of();
    } catch (DirectoryIteratorException e) {
      throw e.getCause();
    }
    names.sort(null);
    return names;
  }

  @Override
  public void delete(String path) throws IOException {
    Files.deleteIfExists(resolve(path));
  }

  @Override
  public void rename(String from, String to) throws IOException {
    Path target = resolve(to);
    makeFolderOf(from, to);
    try {
      Files.move(resolve(from), target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      throw new IOException("this file system cannot rename atomically: " + from + " -> " + to, e);
    }
  }

  @Override
  public boolean renameIfAbsent(String from, String to) throws IOException {
    Path target = resolve(to);
    makeFolderOf(from, to);
    try {
      Files.createLink(target, resolve(from));
      return true;
    } catch (java.nio.file.FileAlreadyExistsException taken) {
      return false;
    } finally {
      Files.deleteIfExists(resolve(from));
    }
  }

  /** Makes the folder of {@code to}, unless it is {@code from}'s (then it exists, or the rename fails anyway). */
  private void makeFolderOf(String from, String to) throws IOException {
    if (!Storage.parent(from).equals(Storage.parent(to))) {
      Files.createDirectories(resolve(to).getParent());
    }
  }

  /**
   * Forces the folder's entries to disk (an fsync of the folder). Only a refusal to open an
   * existing folder for reading passes, as the best that file system allows (some refuse to
   * open a folder at all, and then there is nothing to force through). A folder that is not
   * there, one that cannot be opened or looked at for another reason, and a force that fails
   * (EIO from a failing disk) are thrown: the creations and renames the caller syncs may not
   * survive a power cut, and it must not go on as if they would.
   */
  @Override
  public void syncDirectory(String dir) throws IOException {
    Path p = resolve(dir);
    FileChannel ch;
    try {
      ch = FileChannel.open(p, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw e;
    } catch (IOException e) {
      if (!Files.isDirectory(p)) {
        throw e;
      }
      return; // an existing folder this file system will not open
    }
    try (ch) {
      ch.force(true);
    }
  }

  private static final class ChannelWritableFile implements WritableFile {
    private final String path;
    private final FileChannel ch;
    private long position;

    ChannelWritableFile(String path, FileChannel ch) {
      this.path = path;
      this.ch = ch;
    }

    @Override
    public String path() {
      return path;
    }

    @Override
    public void append(byte[] b, int off, int len) throws IOException {
      ByteBuffer buf = ByteBuffer.wrap(b, off, len);
      while (buf.hasRemaining()) {
        position += ch.write(buf, position);
      }
    }

    @Override
    public long position() {
      return position;
    }

    @Override
    public void sync() throws IOException {
      ch.force(false);
    }

    /** A channel's force runs beside its positional writes (neither moves the channel's position). */
    @Override
    public boolean syncsBesideAppends() {
      return true;
    }

    @Override
    public void truncate(long size) throws IOException {
      ch.truncate(size);
      position = size;
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }

  private static final class MappedReadableFile implements ReadableFile {
    private final String path;
    private final java.nio.MappedByteBuffer map;

    MappedReadableFile(String path, java.nio.MappedByteBuffer map) {
      this.path = path;
      this.map = map;
    }

    @Override
    public String path() {
      return path;
    }

    @Override
    public long size() {
      return map.capacity();
    }

    @Override
    public void readFully(long offset, byte[] dst, int off, int len) throws IOException {
      if (offset < 0 || offset + len > map.capacity()) {
        throw new EOFException(path + ": wanted " + len + " bytes at offset " + offset + ", file ends at "
            + map.capacity());
      }
      map.get((int) offset, dst, off, len);
    }

    @Override
    public void close() {
      // Unmapped by the garbage collector; the channel was closed at open.
    }
  }

  private static final class ChannelReadableFile implements ReadableFile {
    private final String path;
    private final FileChannel ch;
    private final long size;

    ChannelReadableFile(String path, FileChannel ch, long size) {
      this.path = path;
      this.ch = ch;
      this.size = size;
    }

    @Override
    public String path() {
      return path;
    }

    @Override
    public long size() {
      return size;
    }

    @Override
    public void readFully(long offset, byte[] dst, int off, int len) throws IOException {
      ByteBuffer buf = ByteBuffer.wrap(dst, off, len);
      long pos = offset;
      while (buf.hasRemaining()) {
        int n = ch.read(buf, pos);
        if (n < 0) {
          throw new EOFException(path + ": wanted " + len + " bytes at offset " + offset + ", file ends at " + size);
        }
        pos += n;
      }
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }
}
