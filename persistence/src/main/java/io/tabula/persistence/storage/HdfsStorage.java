package io.tabula.persistence.storage;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.client.HdfsDataInputStream;

/**
 * {@link Storage} on HDFS (the paper's GFS): every node of a cluster on several machines
 * reaches the same files.
 *
 * <ul>
 *   <li><b>Durability.</b> {@link WritableFile#sync} is {@code hsync}: every datanode of the
 *       pipeline has forced the bytes to its disk before it returns. {@code hflush} only
 *       puts them in the datanodes' memory, which a power cut of the rack loses; the local
 *       file system's promise is an fsync, so HDFS gives the same one (HBase calls this
 *       {@code FSYNC_WAL}). The price is measured in the bench ({@code bench/run-hdfs}).
 *       {@link WritableFile#flush} is {@code hflush}: what a commit log in {@code OS_BUFFERED}
 *       mode does to each group, so that the writer's death loses nothing it acknowledged
 *       (appended bytes stay in the client's buffer until a 64 KiB packet fills).
 *   <li><b>Names.</b> Creating, renaming and deleting are single namenode operations, logged
 *       durably by the namenode before it answers, so {@link #syncDirectory} has nothing to
 *       do. {@link #renameIfAbsent} is the namenode's own rename, which refuses an existing
 *       target atomically; {@link #createNew} is a create without overwrite, and {@link
 *       #createNewInFolder} the namenode's non-recursive one.
 *   <li><b>Fencing.</b> {@link #fence} writes the {@value Storage#FENCE_MARKER} marker (which
 *       the log writer checks after each sync), then recovers the HDFS lease of every file in
 *       the folder and waits until the namenode has closed each one: the dead or frozen
 *       writer's next {@code hsync} then fails, and every byte it had synced is in the
 *       file's final length. A recovery that does not finish within {@code
 *       leaseRecoveryTimeout} fails with {@link LeaseRecoveryTimeoutException} and is
 *       retried by the caller, as HBase and Accumulo learned to. {@link #isFenced} is one
 *       listing of the folder: the marker, or no folder at all, is a fence.
 *   <li><b>Reads.</b> Positional reads ({@code pread}), which need no shared cursor, so one
 *       open file serves every reader; the block cache and bloom filters stay in front.
 *   <li><b>Cutting back.</b> HDFS cannot truncate a file that is open for writing, so
 *       {@link WritableFile#truncate} fails unless it cuts nothing; the commit log then
 *       treats the failed write as losing the log (its tablets are recovered from what was
 *       synced), which is what a failed HDFS pipeline means anyway.
 * </ul>
 *
 * <p>Thread-safe: the Hadoop file-system client is.
 */
public final class HdfsStorage implements Storage, java.io.Closeable {
  /** The ending of commit-log segment names, the files {@link #fence} recovers (docs/formats/commitlog.md). */
  static final String SEGMENT_SUFFIX = ".log";

  /** The default time a lease recovery may take before {@link #fence} reports it stuck. */
  public static final Duration DEFAULT_LEASE_RECOVERY_TIMEOUT = Duration.ofSeconds(60);

  private final URI uri;
  private final Path root;
  private final FileSystem fs;
  private final Duration leaseRecoveryTimeout;

  /** Storage under {@code uri} (such as {@code hdfs://namenode:8020/tabula}), with Hadoop's default settings. */
  public HdfsStorage(URI uri) throws IOException {
    this(uri, new Configuration(), DEFAULT_LEASE_RECOVERY_TIMEOUT);
  }

  /**
   * Storage under {@code uri}. The client is a new instance of its own (not Hadoop's shared
   * cache), closed by {@link #close}.
   */
  public HdfsStorage(URI uri, Configuration conf, Duration leaseRecoveryTimeout) throws IOException {
    if (uri.getScheme() == null || uri.getPath() == null || uri.getPath().isEmpty()) {
      throw new IllegalArgumentException("an HDFS storage root must be a URI such as hdfs://namenode:8020/tabula, was "
          + uri);
    }
    this.uri = uri;
    this.root = new Path(uri);
    this.fs = FileSystem.newInstance(uri, withTabulaDefaults(conf));
    this.leaseRecoveryTimeout = leaseRecoveryTimeout;
    try {
      fs.mkdirs(root);
    } catch (IOException | RuntimeException e) {
      fs.close();
      throw e;
    }
  }

  /**
   * The client settings Tabula changes unless {@code conf} sets them: closing a file waits
   * for the namenode to see its last block complete, polling from an initial pause of
   * 400 ms by default; every manifest commit and SSTable closes a file, so that pause would
   * be most of their cost (measured on the test cluster: 156 ms per small file closed at
   * 400 ms, 18 ms at 5 ms; the model test on HDFS ran five times faster). A poll is one small
   * namenode call.
   */
  static Configuration withTabulaDefaults(Configuration conf) {
    Configuration c = new Configuration(conf);
    c.setIfUnset("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", "5");
    return c;
  }

  public URI uri() {
    return uri;
  }

  private Path resolve(String path) {
    if (path.startsWith("/") || path.contains("..")) {
      throw new IllegalArgumentException("storage path must be relative and stay under the root: " + path);
    }
    return path.isEmpty() ? root : new Path(root, path);
  }

  @Override
  public WritableFile create(String path) throws IOException {
    return new HdfsWritableFile(path, fs.create(resolve(path), true));
  }

  @Override
  public WritableFile createNew(String path) throws IOException {
    try {
      return new HdfsWritableFile(path, fs.create(resolve(path), false));
    } catch (org.apache.hadoop.fs.FileAlreadyExistsException e) {
      throw taken(path, e);
    }
  }

  private static java.nio.file.FileAlreadyExistsException taken(String path, IOException cause) {
    java.nio.file.FileAlreadyExistsException taken = new java.nio.file.FileAlreadyExistsException(path);
    taken.initCause(cause);
    return taken;
  }

  /**
   * The namenode's non-recursive create, without overwrite: one call, which fails if the file
   * exists or its folder does not.
   */
  @Override
  public WritableFile createNewInFolder(String path) throws IOException {
    try {
      return new HdfsWritableFile(path, fs.createFile(resolve(path)).overwrite(false).build());
    } catch (org.apache.hadoop.fs.FileAlreadyExistsException e) {
      throw taken(path, e);
    } catch (FileNotFoundException e) {
      java.nio.file.NoSuchFileException noFolder = new java.nio.file.NoSuchFileException(Storage.parent(path), null,
          "no such folder to create " + path + " in");
      noFolder.initCause(e);
      throw noFolder;
    }
  }

  @Override
  public void createDirectories(String dir) throws IOException {
    if (!fs.mkdirs(resolve(dir))) {
      throw new IOException("cannot make the folder " + dir);
    }
  }

  @Override
  public ReadableFile open(String path) throws IOException {
    FSDataInputStream in = fs.open(resolve(path));
    try {
      // A file still being written reports its synced length only through the stream.
      long size = in instanceof HdfsDataInputStream h ? h.getVisibleLength()
          : fs.getFileStatus(resolve(path)).getLen();
      return new HdfsReadableFile(path, in, size);
    } catch (IOException | RuntimeException e) {
      in.close();
      throw e;
    }
  }

  @Override
  public boolean exists(String path) {
    try {
      return fs.exists(resolve(path));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot reach HDFS to look for " + path, e);
    }
  }

  @Override
  public long size(String path) throws IOException {
    return fs.getFileStatus(resolve(path)).getLen();
  }

  /**
   * The namenode's time of the file's last close (HDFS sets it when a writer closes, not at
   * each write), or {@link Long#MAX_VALUE} while the file is still open for writing: later than
   * any time the namenode's clock gives, so the sweep, which compares with that clock alone,
   * never takes a file that a writer still holds.
   */
  @Override
  public long modifiedMillis(String path) throws IOException {
    Path p = resolve(path);
    FileStatus st = fs.getFileStatus(p);
    if (st.isFile() && fs instanceof DistributedFileSystem d && !d.isFileClosed(p)) {
      return Long.MAX_VALUE;
    }
    return st.getModificationTime();
  }

  @Override
  public List<String> list(String dir) throws IOException {
    FileStatus[] st;
    try {
      st = fs.listStatus(resolve(dir));
    } catch (FileNotFoundException e) {
      return List.of();
    }
    List<String> names = new ArrayList<>(st.length);
    if (st.length == 1 && st[0].isFile() && st[0].getPath().equals(fs.makeQualified(resolve(dir)))) {
      return List.of(); // listStatus of a file lists the file itself
    }
    for (FileStatus s : st) {
      names.add(s.getPath().getName());
    }
    names.sort(null);
    return names;
  }

  @Override
  public void delete(String path) throws IOException {
    fs.delete(resolve(path), false);
  }

  @Override
  public void rename(String from, String to) throws IOException {
    Path target = resolve(to);
    makeFolderOf(from, to);
    if (fs instanceof DistributedFileSystem d) {
      d.rename(resolve(from), target, Options.Rename.OVERWRITE);
    } else if (!fs.rename(resolve(from), target)) {
      throw new IOException("cannot rename " + from + " to " + to);
    }
  }

  @Override
  public boolean renameIfAbsent(String from, String to) throws IOException {
    Path target = resolve(to);
    makeFolderOf(from, to);
    if (fs.rename(resolve(from), target)) {
      return true;
    }
    fs.delete(resolve(from), false); // the loser's file goes
    if (fs.exists(target)) {
      return false;
    }
    throw new FileNotFoundException("cannot publish " + from + " as " + to + ": " + from + " is gone");
  }

  /** Makes the folder of {@code to}, unless it is {@code from}'s (then it exists, or the rename fails anyway). */
  private void makeFolderOf(String from, String to) throws IOException {
    if (!Storage.parent(from).equals(Storage.parent(to))) {
      fs.mkdirs(resolve(to).getParent());
    }
  }

  /** Nothing to do: the namenode logs each name operation durably before it answers. */
  @Override
  public void syncDirectory(String dir) {}

  /**
   * Fences the commit-log folder: the marker, then a lease recovery of every file in it
   * (see the class comment), waiting until each is closed.
   *
   * @throws LeaseRecoveryTimeoutException if a file is still open after the timeout
   */
  @Override
  public void fence(String dir) throws IOException {
    Storage.super.fence(dir);
    recoverLeases(dir);
  }

  /**
   * Whether the folder holds the marker or is gone, in one namenode call (a listing of the
   * folder, which holds tens of files), where the default's two looks would be two: the log
   * writer makes one look per group commit.
   */
  @Override
  public boolean isFenced(String dir) {
    FileStatus[] st;
    try {
      st = fs.listStatus(resolve(dir));
    } catch (FileNotFoundException gone) {
      return true;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot reach HDFS to look for the fence of " + dir, e);
    }
    for (FileStatus s : st) {
      if (s.getPath().getName().equals(FENCE_MARKER)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Recovers the HDFS lease of every commit-log segment ({@code *.log}) directly under {@code
   * dir} and waits until the namenode has closed each one, so that their lengths are final
   * and their former writer can add nothing more. Other files there (recovery pieces that
   * live nodes are writing) are left alone.
   *
   * @throws LeaseRecoveryTimeoutException if a file is still open after the timeout
   */
  public void recoverLeases(String dir) throws IOException {
    if (!(fs instanceof DistributedFileSystem d)) {
      return;
    }
    long deadline = System.nanoTime() + leaseRecoveryTimeout.toNanos();
    for (String name : list(dir)) {
      if (!name.endsWith(SEGMENT_SUFFIX)) {
        continue; // recovery pieces and their temporary files, which live nodes may be writing now
      }
      Path p = resolve(Storage.path(dir, name));
      long pause = 50;
      while (!d.recoverLease(p)) {
        if (System.nanoTime() - deadline > 0) {
          throw new LeaseRecoveryTimeoutException(Storage.path(dir, name), leaseRecoveryTimeout);
        }
        try {
          Thread.sleep(pause);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted recovering the lease of " + p);
        }
        pause = Math.min(1000, pause * 2);
        if (d.isFileClosed(p)) {
          break;
        }
      }
    }
  }

  /**
   * Drops every file this client has open for writing without closing it: what a process
   * killed mid-write leaves behind (the namenode counts the files as open until their lease
   * is recovered). The client stays usable for reads. For crash tests.
   */
  public void abandonWrites() {
    if (fs instanceof DistributedFileSystem d) {
      d.getClient().closeAllFilesBeingWritten(true);
    }
  }

  @Override
  public void close() throws IOException {
    fs.close();
  }

  @Override
  public String toString() {
    return "HdfsStorage(" + uri + ")";
  }

  private static final class HdfsWritableFile implements WritableFile {
    private final String path;
    private final FSDataOutputStream out;

    HdfsWritableFile(String path, FSDataOutputStream out) {
      this.path = path;
      this.out = out;
    }

    @Override
    public String path() {
      return path;
    }

    @Override
    public void append(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }

    @Override
    public long position() {
      return out.getPos();
    }

    /** {@code hflush}: every datanode of the pipeline has the bytes (in its memory), and a new reader sees them. */
    @Override
    public void flush() throws IOException {
      out.hflush();
    }

    @Override
    public void sync() throws IOException {
      out.hsync();
    }

    @Override
    public void truncate(long size) throws IOException {
      if (size != out.getPos()) {
        throw new IOException(path + ": HDFS cannot cut back a file open for writing (to " + size + " of "
            + out.getPos() + " bytes)");
      }
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }

  /** An open HDFS file read by position; {@code size} is the length visible when it was opened. */
  private record HdfsReadableFile(String path, FSDataInputStream in, long size) implements ReadableFile {
    @Override
    public void readFully(long offset, byte[] dst, int off, int len) throws IOException {
      if (offset < 0 || offset + len > size) {
        throw new EOFException(path + ": wanted " + len + " bytes at offset " + offset + ", file ends at " + size);
      }
      in.readFully(offset, dst, off, len);
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }
}
