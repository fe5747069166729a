package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.ForwardingWritableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A buffered log's background syncs ({@link WriteBack}), over real files. */
class WriteBackTest {
  private static final String DIR = "logs/n1";
  private static final String THREAD = "tabula-commit-log-write-back";

  @TempDir
  Path root;

  /** Local files whose syncs are noted by thread; {@code beside} says whether they may run beside appends. */
  private static final class NotingStorage extends ForwardingStorage {
    final List<String> syncThreads = new CopyOnWriteArrayList<>();
    final boolean beside;
    final boolean failInBackground;

    NotingStorage(Storage delegate, boolean beside, boolean failInBackground) {
      super(delegate);
      this.beside = beside;
      this.failInBackground = failInBackground;
    }

    @Override
    public WritableFile create(String path) throws IOException {
      return new ForwardingWritableFile(delegate.create(path)) {
        @Override
        public void sync() throws IOException {
          String thread = Thread.currentThread().getName();
          syncThreads.add(thread);
          if (failInBackground && thread.equals(THREAD)) {
            throw new IOException("injected: the disk refused a background sync");
          }
          delegate.sync();
        }

        @Override
        public boolean syncsBesideAppends() {
          return beside && delegate.syncsBesideAppends();
        }
      };
    }

    long background() {
      return syncThreads.stream().filter(THREAD::equals).count();
    }
  }

  private static byte[] record(int i) {
    byte[] b = new byte[4096];
    b[0] = (byte) i;
    b[1] = (byte) (i >> 8);
    return b;
  }

  @Test
  void aBufferedLogSyncsItsSegmentAsItGrowsAndReplaysWhole() throws IOException {
    NotingStorage storage = new NotingStorage(new FileStorage(root), true, false);
    int n = 1024; // 4 MiB
    try (CommitLog log = CommitLog.open(storage, DIR, new CommitLogOptions(8L << 20, Durability.OS_BUFFERED))) {
      List<CompletableFuture<Void>> acks = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        acks.add(log.append("t", i + 1, record(i)));
      }
      acks.forEach(CompletableFuture::join);
    }
    assertTrue(storage.background() >= 1, "4 MiB written in 1 MiB steps were synced in the background: "
        + storage.syncThreads);
    List<Long> sequences = new ArrayList<>();
    try (CommitLog log = CommitLog.open(new FileStorage(root), DIR, CommitLogTest.PLAIN)) {
      log.replay((t, s, b) -> {
        assertEquals((byte) (s - 1), b[0]);
        sequences.add(s);
      });
    }
    assertEquals(n, sequences.size());
    for (int i = 0; i < n; i++) {
      assertEquals(i + 1, sequences.get(i));
    }
  }

  @Test
  void filesThatCannotSyncBesideAppendsAreSyncedOnlyByTheWriter() throws IOException {
    NotingStorage storage = new NotingStorage(new FileStorage(root), false, false);
    try (CommitLog log = CommitLog.open(storage, DIR, new CommitLogOptions(1L << 20, Durability.OS_BUFFERED))) {
      for (int i = 0; i < 1024; i++) {
        log.append("t", i + 1, record(i)).join(); // one by one: the segment rolls at 1 MiB
      }
    }
    assertEquals(0, storage.background(), storage.syncThreads.toString());
    assertTrue(storage.syncThreads.size() >= 3, "the writer synced each segment it sealed: "
        + storage.syncThreads);
  }

  @Test
  void aFailedBackgroundSyncLosesTheLogAtTheNextRoll() throws Exception {
    NotingStorage storage = new NotingStorage(new FileStorage(root), true, true);
    try (CommitLog log = CommitLog.open(storage, DIR, new CommitLogOptions(2L << 20, Durability.OS_BUFFERED))) {
      CompletableFuture<LogLostException> lost = log.whenLost();
      for (int i = 0; i < 4096 && !lost.isDone(); i++) { // up to 16 MiB: several rolls
        try {
          log.append("t", i + 1, record(i)).join();
        } catch (CompletionException e) {
          break; // lost while this one waited
        }
      }
      LogLostException why = lost.get(30, TimeUnit.SECONDS);
      assertInstanceOf(LogSyncFailedException.class, why);
      assertTrue(storage.background() >= 1, storage.syncThreads.toString());
      CompletionException later = assertThrows(CompletionException.class,
          () -> log.append("t", 1_000_000, record(0)).join());
      assertInstanceOf(IOException.class, later.getCause());
    } catch (IOException closeReportsTheFailure) {
      assertTrue(String.valueOf(closeReportsTheFailure.getMessage()).contains(DIR), closeReportsTheFailure.toString());
    }
  }
}
