package io.tabula.persistence.storage;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;

/**
 * What every {@link Storage} promises about folders, for the commit log (fencing review H2): a
 * log folder is made only on purpose ({@link Storage#createDirectories}, when the log opens), a
 * segment is made only in the folder as it is, a rename within a folder never makes it, and a
 * folder that is gone reads as fenced.
 */
final class FolderContract {
  private FolderContract() {}

  static void check(Storage s) throws IOException {
    String dir = "logs/n1.a";
    assertTrue(s.isFenced(dir), "no folder: fenced");
    assertThrows(NoSuchFileException.class, () -> s.createNewInFolder(dir + "/000001.log"));
    assertFalse(s.exists(dir), "the failed create made no folder");
    s.createDirectories(dir);
    s.createDirectories(dir); // nothing if it exists
    assertFalse(s.isFenced(dir));
    try (WritableFile w = s.createNewInFolder(dir + "/000001.log")) {
      w.sync();
    }
    assertThrows(FileAlreadyExistsException.class, () -> s.createNewInFolder(dir + "/000001.log"));
    s.fence(dir);
    assertTrue(s.isFenced(dir));
    for (String name : s.list(dir)) {
      s.delete(Storage.path(dir, name));
    }
    s.delete(dir);
    assertThrows(IOException.class, () -> s.rename(dir + "/000002.log.prep", dir + "/000002.log"));
    assertFalse(s.exists(dir), "a rename within a folder made no folder");
    assertTrue(s.isFenced(dir), "removed: fenced");
  }
}
