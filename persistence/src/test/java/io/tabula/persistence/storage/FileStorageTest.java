package io.tabula.persistence.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.wal.CommitLog;
import io.tabula.persistence.wal.LogPieces;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FileStorage} fails closed: only "no such file" reads as absent. Any other error of a
 * look at a name (EIO, EACCES, ESTALE on NFS...) is thrown, never answered as "absent" or "empty
 * folder". Otherwise a writer would read "not fenced" and acknowledge (docs/fencing.md, the
 * argument, Guarantee 1 (b): "a check found no FENCED" must mean the marker is not there), and a
 * recovery would read an empty folder and drop a log that holds acknowledged writes (Guarantee
 * 1: "it reads every segment of F"). Fencing review H5.
 *
 * <p>The tests run as root, for whom permissions restrict nothing, so the error here is a real
 * one that root gets too: a folder that is a symbolic link to itself, which every {@code stat}
 * and listing through it fails with ELOOP. And the folder rules every storage keeps for the
 * commit log ({@link FolderContract}, fencing review H2).
 */
class FileStorageTest {
  private static final String DIR = "logs/n1.a";

  @TempDir
  Path root;

  /** A storage whose log folder {@value #DIR} is a symbolic link to itself. */
  private FileStorage storageWithLoopedFolder() throws IOException {
    FileStorage storage = new FileStorage(root);
    Path folder = root.resolve(DIR);
    Files.createDirectories(folder.getParent());
    Files.createSymbolicLink(folder, folder);
    return storage;
  }

  @Test
  void aNameThatCannotBeLookedAtIsAnErrorNotAbsent() throws IOException {
    FileStorage storage = storageWithLoopedFolder();
    assertThrows(UncheckedIOException.class, () -> storage.exists(DIR + "/" + Storage.FENCE_MARKER));
    assertThrows(UncheckedIOException.class, () -> storage.exists(DIR));
    assertThrows(UncheckedIOException.class, () -> storage.isFenced(DIR),
        "a fence that cannot be looked for is not 'not fenced'");
  }

  @Test
  void aFolderThatCannotBeListedIsAnErrorNotEmpty() throws IOException {
    FileStorage storage = storageWithLoopedFolder();
    assertThrows(IOException.class, () -> storage.list(DIR));
  }

  @Test
  void aLogFolderThatCannotBeReadFailsItsRecoveryInsteadOfDeliveringNothing() throws IOException {
    FileStorage storage = storageWithLoopedFolder();
    assertThrows(IOException.class, () -> CommitLog.readFolder(storage, DIR, (id, seq, payload) -> { }));
    assertThrows(IOException.class, () -> LogPieces.replay(storage, DIR, "t1", (id, seq, payload) -> { },
        (what, why) -> { }));
  }

  @Test
  void foldersAreMadeOnlyOnPurposeAndAMissingOneIsFenced() throws IOException {
    FolderContract.check(new FileStorage(root));
  }

  /**
   * A folder sync whose force fails is an error: the renames and creations it was to make
   * durable (a published manifest, a fence marker, the root's identity) may be lost at a power
   * cut, so whoever syncs must not go on as if they were not. The fault is a real one the
   * kernel gives root too: Linux opens a folder of {@code /proc} for reading, and its fsync
   * fails (EINVAL); a failing disk's EIO, which the same branch handles, needs a device-mapper
   * target this machine's containers do not offer. Only the refusal to open a folder at all
   * (some file systems refuse, and there is nothing more to force) may pass, and a folder
   * that is not there, or that cannot be looked at, is an error too.
   */
  @Test
  void aFolderSyncThatFailsIsAnError() throws IOException {
    Path proc = Path.of("/proc");
    Assumptions.assumeTrue(Files.isDirectory(proc.resolve("self")), "a Linux /proc");
    IOException failed = assertThrows(IOException.class, () -> new FileStorage(proc).syncDirectory(""),
        "a failed force of a folder was taken for a sync");
    assertFalse(failed instanceof java.nio.file.NoSuchFileException, failed.toString());

    FileStorage storage = storageWithLoopedFolder();
    assertThrows(IOException.class, () -> storage.syncDirectory(DIR), "a folder that cannot be opened or looked at");
    assertThrows(java.nio.file.NoSuchFileException.class, () -> storage.syncDirectory("logs/none"));
    storage.syncDirectory("logs");
  }

  @Test
  void onlyNoSuchFileIsAbsent() throws IOException {
    FileStorage storage = new FileStorage(root);
    assertFalse(storage.exists("nothing"));
    assertFalse(storage.exists("nothing/below"));
    assertEquals(List.of(), storage.list("nothing"), "a folder that does not exist lists as empty");
    try (WritableFile w = storage.create("a/file")) {
      w.sync();
    }
    assertTrue(storage.exists("a/file"));
    assertTrue(storage.exists("a"));
    assertEquals(List.of("file"), storage.list("a"));
    Files.createSymbolicLink(root.resolve("a/dangling"), root.resolve("a/gone"));
    assertFalse(storage.exists("a/dangling"), "a link to nothing names nothing");
  }
}
