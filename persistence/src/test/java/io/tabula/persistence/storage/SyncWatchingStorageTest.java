package io.tabula.persistence.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SyncWatchingStorageTest {
  @TempDir
  Path dir;

  @Test
  void theFirstFailedFsyncOfAFileIsReportedAndRethrownTyped() throws Exception {
    FaultyStorage faulty = new FaultyStorage(new FileStorage(dir));
    SyncWatchingStorage storage = new SyncWatchingStorage(faulty);
    try (WritableFile f = storage.create("a")) {
      f.append("x".getBytes(StandardCharsets.UTF_8));
      f.sync();
      assertFalse(storage.whenSyncFailed().isDone(), "a sync that worked is no failure");
      faulty.failSyncs(true);
      StorageSyncFailedException e = assertThrows(StorageSyncFailedException.class, f::sync);
      assertEquals("a", e.path());
      assertSame(e, storage.whenSyncFailed().getNow(null));
      assertThrows(StorageSyncFailedException.class, f::sync);
      assertSame(e, storage.whenSyncFailed().getNow(null), "the first failure stays the one reported");
    }
  }

  @Test
  void aFailedFsyncOfAFolderOrOfAFileCreatedAnyOtherWayIsReported() throws Exception {
    FaultyStorage faulty = new FaultyStorage(new FileStorage(dir));
    SyncWatchingStorage storage = new SyncWatchingStorage(faulty);
    storage.createDirectories("d");
    faulty.failSyncs(true);
    assertEquals("d", assertThrows(StorageSyncFailedException.class, () -> storage.syncDirectory("d")).path());

    for (String how : new String[] {"createNew", "createNewInFolder", "overwrite"}) {
      SyncWatchingStorage fresh = new SyncWatchingStorage(faulty);
      String path = "d/" + how;
      faulty.failSyncs(false);
      if (how.equals("overwrite")) {
        try (WritableFile f = fresh.create(path)) {
          f.append(new byte[8]);
          f.sync();
        }
      }
      try (WritableFile f = switch (how) {
        case "createNew" -> fresh.createNew(path);
        case "createNewInFolder" -> fresh.createNewInFolder(path);
        default -> fresh.overwrite(path, 4);
      }) {
        faulty.failSyncs(true);
        assertThrows(StorageSyncFailedException.class, f::sync, how);
        assertTrue(fresh.whenSyncFailed().isDone(), how);
      }
    }
  }

  @Test
  void theRootsOwnAtomicCreateAndInPlaceOverwriteAreHandedOn() throws Exception {
    FileStorage files = new FileStorage(dir);
    SyncWatchingStorage storage = new SyncWatchingStorage(files);
    assertTrue(files.canOverwrite() && storage.canOverwrite(), "a commit log can prepare its segments");
    try (WritableFile f = storage.createNew("b")) {
      assertTrue(f.syncsBesideAppends(), "a commit log can sync beside its appends");
    }
    assertThrows(FileAlreadyExistsException.class, () -> storage.createNew("b"));
  }
}
