package io.tabula.multijvm;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.ForwardingWritableFile;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The local file system, except that every fsync (of a file or a folder) fails once a file
 * named {@value #SWITCH} exists beside the data directory: a disk that stops making writes
 * durable, as a failing device or a full thin-provisioned volume does. Test-only, and this is
 * the fault the scenario injects (a real failing device needs a kernel device-mapper target,
 * which this machine's containers do not offer). A node runs on it through {@code
 * tabula.node.storage-class}; the scenario's other nodes use the plain file system.
 */
public final class FsyncRefusingStorage extends ForwardingStorage {
  /** The file beside the data directory whose presence makes every fsync fail. */
  public static final String SWITCH = "refuse-fsync";

  private final Path trigger;

  public FsyncRefusingStorage(Path dataDir) throws IOException {
    super(new FileStorage(dataDir));
    this.trigger = dataDir.toAbsolutePath().resolveSibling(SWITCH);
  }

  private void refuseIfSwitchedOn(String what) throws IOException {
    if (Files.exists(trigger)) {
      throw new IOException("Input/output error (fsync refused by the test's disk): " + what);
    }
  }

  @Override
  public WritableFile create(String path) throws IOException {
    return new ForwardingWritableFile(delegate.create(path)) {
      @Override
      public void sync() throws IOException {
        refuseIfSwitchedOn(path);
        delegate.sync();
      }
    };
  }

  @Override
  public void syncDirectory(String dir) throws IOException {
    refuseIfSwitchedOn(dir);
    delegate.syncDirectory(dir);
  }
}
