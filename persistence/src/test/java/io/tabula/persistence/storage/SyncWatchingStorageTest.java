package io.tabula.persistence.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SyncWatchingStorageTest {
  private static final String OWN_LOG = "logs/n1.abc";

  @TempDir
  Path dir;

  @Test
  void theFirstFailedFsyncOfAFileIsReportedAndRethrownTyped() throws Exception {
    FaultyStorage faulty = new FaultyStorage(new FileStorage(dir));
    SyncWatchingStorage storage = new SyncWatchingStorage(faulty, OWN_LOG);
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
    SyncWatchingStorage storage = new SyncWatchingStorage(faulty, OWN_LOG);
    storage.createDirectories("d");
    faulty.failSyncs(true);
    assertEquals("d", assertThrows(StorageSyncFailedException.class, () -> storage.syncDirectory("d")).path());

    for (String how : new String[] {"createNew", "createNewInFolder", "overwrite"}) {
      SyncWatchingStorage fresh = new SyncWatchingStorage(faulty, OWN_LOG);
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

  /**
   * The node's own commit log tells a failed fsync from a fence itself (on HDFS a fenced
   * writer's sync fails); a missing folder says nothing of the disk.
   */
  @Test
  void theOwnCommitLogAndAMissingFolderAreNotCounted() throws Exception {
    FaultyStorage faulty = new FaultyStorage(new FileStorage(dir));
    SyncWatchingStorage storage = new SyncWatchingStorage(faulty, OWN_LOG);
    storage.createDirectories(OWN_LOG);
    storage.createDirectories(OWN_LOG + "x");
    assertThrows(NoSuchFileException.class, () -> storage.syncDirectory("nowhere"));
    faulty.failSyncs(true);
    try (WritableFile f = storage.create(OWN_LOG + "/000001.log")) {
      IOException e = assertThrows(IOException.class, f::sync);
      assertFalse(e instanceof StorageSyncFailedException, "rethrown as it was: " + e);
    }
    assertFalse(storage.whenSyncFailed().isDone(), "neither is a failed fsync of the node's storage");
    assertThrows(StorageSyncFailedException.class, () -> storage.syncDirectory(OWN_LOG + "x"),
        "a folder whose name only starts like the log's is watched");
  }

  /** What a root does its own way reaches it: an atomic create, an overwrite in place, the fence, close. */
  @Test
  void theRootsOwnWaysAreHandedOn() throws Exception {
    List<String> calls = new ArrayList<>();
    class Recording extends ForwardingStorage implements Closeable {
      Recording(Storage files) {
        super(files);
      }

      @Override
      public WritableFile createNew(String path) throws IOException {
        calls.add("createNew");
        return delegate.createNew(path);
      }

      @Override
      public WritableFile createNewInFolder(String path) throws IOException {
        calls.add("createNewInFolder");
        return delegate.createNewInFolder(path);
      }

      @Override
      public boolean canOverwrite() {
        calls.add("canOverwrite");
        return true;
      }

      @Override
      public WritableFile overwrite(String path, long from) throws IOException {
        calls.add("overwrite");
        return delegate.overwrite(path, from);
      }

      @Override
      public void fence(String d) {
        calls.add("fence");
      }

      @Override
      public boolean isFenced(String d) {
        calls.add("isFenced");
        return false;
      }

      @Override
      public void close() {
        calls.add("close");
      }
    }
    try (SyncWatchingStorage storage = new SyncWatchingStorage(new Recording(new FileStorage(dir)), OWN_LOG)) {
      storage.createDirectories("d");
      storage.createNew("d/a").close();
      storage.createNewInFolder("d/b").close();
      assertTrue(storage.canOverwrite());
      try (WritableFile f = storage.overwrite("d/a", 0)) {
        assertTrue(f.syncsBesideAppends(), "a commit log can sync beside its appends");
      }
      storage.fence("d");
      assertFalse(storage.isFenced("d"));
    }
    assertEquals(List.of("createNew", "createNewInFolder", "canOverwrite", "overwrite", "fence", "isFenced", "close"),
        calls);
  }
}
