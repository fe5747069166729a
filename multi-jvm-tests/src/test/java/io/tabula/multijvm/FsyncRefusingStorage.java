package io.tabula.multijvm;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The local file system, except that every fsync (of a file or a folder) fails once a file
 * named {@value #SWITCH} exists beside the data directory: a disk that stops making writes
 * durable, as a failing device or a full thin-provisioned volume does. Test-only, and this is
 * the fault the scenario injects (a real failing device needs a kernel device-mapper target,
 * which this machine's containers do not offer). A node runs on it through {@code
 * tabula.node.storage-class}; the scenario's other nodes use the plain file system.
 */
public final class FsyncRefusingStorage implements Storage {
  /** The file beside the data directory whose presence makes every fsync fail. */
  public static final String SWITCH = "refuse-fsync";

  private final FileStorage files;
  private final Path trigger;

  public FsyncRefusingStorage(Path dataDir) throws IOException {
    this.files = new FileStorage(dataDir);
    this.trigger = dataDir.toAbsolutePath().resolveSibling(SWITCH);
  }

  private void refuseIfSwitchedOn(String what) throws IOException {
    if (Files.exists(trigger)) {
      throw new IOException("Input/output error (fsync refused by the test's disk): " + what);
    }
  }

  @Override
  public WritableFile create(String path) throws IOException {
    WritableFile f = files.create(path);
    return new WritableFile() {
      @Override
      public String path() {
        return f.path();
      }

      @Override
      public void append(byte[] b, int off, int len) throws IOException {
        f.append(b, off, len);
      }

      @Override
      public long position() {
        return f.position();
      }

      @Override
      public void sync() throws IOException {
        refuseIfSwitchedOn(path);
        f.sync();
      }

      @Override
      public void truncate(long size) throws IOException {
        f.truncate(size);
      }

      @Override
      public void close() throws IOException {
        f.close();
      }
    };
  }

  @Override
  public ReadableFile open(String path) throws IOException {
    return files.open(path);
  }

  @Override
  public boolean exists(String path) {
    return files.exists(path);
  }

  @Override
  public long size(String path) throws IOException {
    return files.size(path);
  }

  @Override
  public long modifiedMillis(String path) throws IOException {
    return files.modifiedMillis(path);
  }

  @Override
  public List<String> list(String dir) throws IOException {
    return files.list(dir);
  }

  @Override
  public void delete(String path) throws IOException {
    files.delete(path);
  }

  @Override
  public void rename(String from, String to) throws IOException {
    files.rename(from, to);
  }

  @Override
  public void syncDirectory(String dir) throws IOException {
    refuseIfSwitchedOn(dir);
    files.syncDirectory(dir);
  }
}
