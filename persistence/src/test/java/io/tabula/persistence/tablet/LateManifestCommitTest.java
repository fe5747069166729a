package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A former owner's manifest commit that overlaps the tablet's next owner (docs/fencing.md,
 * "Manifests"; docs/formats/manifest.md, "Publish outcomes"): whatever the commit finds, it
 * deletes no file that a manifest the next owners read names. Holes H1 and S6 of the fencing
 * review. The former owner runs on storage that pauses it at a chosen step of the commit (a
 * process pause there); the master and the other nodes use storages of their own over the
 * same root, as other processes would.
 */
class LateManifestCommitTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));
  private static final String DIR = Tablet.dirOf("tbl", "t1");
  private static final byte[] ALL = new byte[0];

  @TempDir
  Path root;

  /**
   * H1, a flush: the old owner publishes its flush's manifest version and pauses in the
   * folder's sync; the master fences its log and the new owner claims the tablet, adopting that
   * version (which names the flush's SSTable, and whose redo point covers the rows). When the
   * old owner resumes, its commit is superseded: it must keep the SSTable, or the rows are lost
   * and the tablet cannot be opened.
   */
  @Test
  void aFlushPublishedAndThenAdoptedByTheNewOwnerKeepsItsSSTable() throws Exception {
    OldOwner old = oldOwner();
    Tablet stale = old.tablet();
    List<String> rows = write(stale, 0, 20);
    resumeOnceANewOwnerAdoptedTheVersion(old, stale::freezeAndFlush, rows);
  }

  /**
   * H1, a major compaction: as above, but the adopted version names the compaction's output in
   * place of its inputs. The old owner must keep the output (and mark no input obsolete).
   */
  @Test
  void aCompactionPublishedAndThenAdoptedByTheNewOwnerKeepsItsOutput() throws Exception {
    OldOwner old = oldOwner();
    Tablet stale = old.tablet();
    List<String> rows = new ArrayList<>(write(stale, 0, 10));
    stale.freezeAndFlush().join();
    rows.addAll(write(stale, 10, 20));
    stale.freezeAndFlush().join();
    resumeOnceANewOwnerAdoptedTheVersion(old, stale::majorCompact, rows);
  }

  /**
   * A flush whose manifest was linked but whose folder's sync then failed: whether the version
   * is published is unknown, so the SSTable it names is kept. The node goes down; the next
   * owner adopts that version, so the rows are read from that SSTable and not replayed.
   */
  @Test
  void aFlushWhoseOutcomeIsUnknownKeepsItsSSTable() throws Exception {
    OldOwner old = oldOwner();
    Tablet stale = old.tablet();
    List<String> rows = write(stale, 0, 20);

    old.storage().failFolderSync();
    CompletionException e = assertThrows(CompletionException.class, () -> stale.freezeAndFlush().join());
    old.server().abandon();
    new FileStorage(root).fence("logs/n1");

    assertIntact(List.of("n1"), List.of(new TabletRows("t1", ALL, ALL, rows)));
    assertTrue(hasCause(e, ManifestOutcomeUnknownException.class), "outcome unknown, typed: " + e);
  }

  /**
   * S6: the old owner passes its fence check for a major compaction's commit and pauses before
   * publishing. Meanwhile its log is fenced, the new owner opens the tablet and splits it (the
   * children share its SSTables, not owned), and the master's sweep, once its grace is over,
   * takes the parent's manifests. The old owner then publishes into a folder with no manifest:
   * no newer version is found, so the version check cannot refuse it. The fence check after the
   * publish finds the fence, and the compaction's inputs, which the children name, are kept.
   */
  @Test
  void aCompactionCommittedIntoASweptSplitParentDeletesNoneOfTheChildrensFiles() throws Exception {
    OldOwner old = oldOwner();
    Tablet stale = old.tablet();
    List<String> left = write(stale, 0, 10);
    stale.freezeAndFlush().join();
    List<String> right = write(stale, 10, 20);
    stale.freezeAndFlush().join();

    old.storage().pauseAt(Step.BEFORE_PUBLISH);
    CompletableFuture<Void> compaction = stale.majorCompact();
    old.storage().awaitPaused();
    Storage master = new FileStorage(root);
    try {
      master.fence("logs/n1");
      TabletServer fresh = TabletServer.startOnDemand(new FileStorage(root), TabletServer.Options.defaults("n2"),
          () -> 6_000_000L, t -> SCHEMA, (what, e) -> { });
      fresh.openTablet("tbl", "t1", ALL, ALL, List.of("n1"));
      fresh.split("t1", b("r10"), "t2", "t3");
      fresh.close();
      // Two sweeps a grace apart, the files older than a grace by the storage's clock.
      AtomicLong nanos = new AtomicLong();
      Storage aged = new io.tabula.persistence.storage.ForwardingStorage(master) {
        @Override
        public long modifiedMillis(String path) throws IOException {
          long m = super.modifiedMillis(path);
          return path.startsWith(DIR + "/") ? m - Duration.ofMinutes(20).toMillis() : m;
        }
      };
      FileSweeper sweeper = new FileSweeper(aged, Duration.ofMinutes(15), nanos::get);
      FileSweeper.Marks marks = new FileSweeper.Marks();
      Map<String, Set<String>> directory = Map.of("tbl", Set.of("t2", "t3"));
      sweeper.sweep(marks, () -> directory, () -> true);
      nanos.addAndGet(Duration.ofMinutes(20).toNanos());
      sweeper.sweep(marks, () -> directory, () -> true);
      assertFalse(ManifestCodec.exists(master, DIR), "the sweep took the parent's manifests");
    } finally {
      old.storage().resume();
    }
    TabletFlushes.join(compaction);
    assertTrue(ManifestCodec.exists(master, DIR), "the old owner's compaction published into the swept folder");
    old.server().abandon();

    assertIntact(List.of(), List.of(new TabletRows("t2", ALL, b("r10"), left),
        new TabletRows("t3", b("r10"), ALL, right)));
  }

  /**
   * Starts {@code work} (a flush or a compaction of t1, which holds {@code rows}) on the old
   * owner, which pauses in its commit's folder sync, after the link. Meanwhile the master
   * fences the old owner's log, and a new owner opens the tablet (its claim adopts the newest
   * version, the old owner's) and closes it cleanly. Then the old owner resumes: its commit
   * fails as superseded, and a third owner finds every file and row of the tablet.
   */
  private void resumeOnceANewOwnerAdoptedTheVersion(OldOwner old, Supplier<CompletableFuture<Void>> work,
      List<String> rows) throws Exception {
    old.storage().pauseAt(Step.FOLDER_SYNC);
    CompletableFuture<Void> running = work.get();
    old.storage().awaitPaused();
    try {
      new FileStorage(root).fence("logs/n1");
      TabletServer fresh = TabletServer.startOnDemand(new FileStorage(root), TabletServer.Options.defaults("n2"),
          () -> 6_000_000L, t -> SCHEMA, (what, e) -> { });
      fresh.openTablet("tbl", "t1", ALL, ALL, List.of("n1"));
      fresh.close();
    } finally {
      old.storage().resume();
    }
    CompletionException outcome = assertThrows(CompletionException.class, running::join);
    old.server().abandon();

    assertIntact(List.of(), List.of(new TabletRows("t1", ALL, ALL, rows)));
    assertTrue(hasCause(outcome, ManifestSupersededException.class), "published, then superseded, typed: " + outcome);
  }

  /** A tablet as a third node opens it: its id, its row range, and the rows it must hold. */
  private record TabletRows(String id, byte[] start, byte[] end, List<String> rows) {}

  /**
   * Opens each of {@code tablets} on a third node, replaying {@code logs}: every SSTable its
   * manifest names exists, and every row written to it reads back.
   */
  private void assertIntact(List<String> logs, List<TabletRows> tablets) throws IOException {
    Storage storage = new FileStorage(root);
    TabletServer reader = TabletServer.startOnDemand(storage, TabletServer.Options.defaults("n3"),
        () -> 7_000_000L, t -> SCHEMA, (what, e) -> { });
    try {
      for (TabletRows c : tablets) {
        List<String> missing = new ArrayList<>();
        ManifestCodec.read(storage, Tablet.dirOf("tbl", c.id())).groups().values()
            .forEach(refs -> refs.stream().filter(r -> !storage.exists(r.path())).forEach(r -> missing.add(r.path())));
        assertEquals(List.of(), missing, "SSTables the manifest of " + c.id() + " names, deleted");
        Tablet t = reader.openTablet("tbl", c.id(), c.start(), c.end(), logs).tablet();
        List<String> lost = new ArrayList<>();
        for (String row : c.rows()) {
          if (t.read(b(row), ReadFilter.all()).isEmpty()) {
            lost.add(row);
          }
        }
        assertEquals(List.of(), lost, "acknowledged rows of " + c.id() + " lost");
      }
    } finally {
      reader.close();
    }
  }

  /** The tablet's old owner: node n1, on storage that can pause it, with tablet t1 created. */
  private record OldOwner(PausingStorage storage, TabletServer server, Tablet tablet) {}

  private OldOwner oldOwner() throws IOException {
    PausingStorage storage = new PausingStorage(new FileStorage(root));
    TabletServer server = TabletServer.open(storage, TabletServer.Options.defaults("n1"), () -> 5_000_000L,
        t -> SCHEMA, (what, e) -> { });
    return new OldOwner(storage, server, server.createTablet("tbl", "t1", ALL, ALL));
  }

  /** Writes rows {@code r<from>} to {@code r<to - 1>} (two digits), acknowledged; returns them. */
  static List<String> write(Tablet t, int from, int to) {
    List<String> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      String row = String.format("r%02d", i);
      t.apply(RowMutation.of(b(row), new Mutation.SetCell("f", b("q"), 1000, b("v" + i)))).join();
      rows.add(row);
    }
    return rows;
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return true;
      }
    }
    return false;
  }

  /** Where {@link PausingStorage} pauses a manifest commit in the tablet's folder. */
  private enum Step {
    /** Creating the temporary file: after the commit's fence check, before its publish. */
    BEFORE_PUBLISH,
    /** Syncing the folder: after the link that publishes the version, before the listing that checks it. */
    FOLDER_SYNC
  }

  /**
   * The old owner's storage over the shared root. Once {@link #pauseAt armed}, the next
   * manifest commit in the tablet's folder stops at that step until {@link #resume}; once
   * {@link #failFolderSync told}, the next sync of that folder fails.
   */
  private static final class PausingStorage extends ForwardingStorage {
    private final AtomicReference<Step> pauseAt = new AtomicReference<>();
    private final CountDownLatch paused = new CountDownLatch(1);
    private final CountDownLatch resumed = new CountDownLatch(1);
    private volatile boolean failFolderSync;

    PausingStorage(Storage delegate) {
      super(delegate);
    }

    void pauseAt(Step step) {
      pauseAt.set(step);
    }

    void failFolderSync() {
      failFolderSync = true;
    }

    void awaitPaused() throws InterruptedException {
      assertTrue(paused.await(60, TimeUnit.SECONDS), "the old owner's commit never reached its pause");
    }

    void resume() {
      resumed.countDown();
    }

    @Override
    public WritableFile create(String path) throws IOException {
      if (Storage.parent(path).equals(DIR) && path.substring(DIR.length() + 1).startsWith(ManifestFormat.TEMP_NAME)) {
        pauseIf(Step.BEFORE_PUBLISH);
      }
      return delegate.create(path);
    }

    @Override
    public void syncDirectory(String dir) throws IOException {
      if (dir.equals(DIR)) {
        if (failFolderSync) {
          failFolderSync = false;
          throw new IOException("injected: syncing " + dir + " failed");
        }
        pauseIf(Step.FOLDER_SYNC);
      }
      delegate.syncDirectory(dir);
    }

    private void pauseIf(Step step) throws IOException {
      if (pauseAt.compareAndSet(step, null)) {
        paused.countDown();
        try {
          resumed.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while paused");
        }
      }
    }
  }
}
