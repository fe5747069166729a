package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A split asked of the engine ({@link TabletServer#split}) while a merging compaction of the
 * tablet runs: the split waits for the merge, which commits first, and the children share its
 * output; no merge commits into a tablet once it is split (its manifest would lose the split's
 * record, and the inputs it marks obsolete are files the children name). The merge is held by
 * its storage while it writes its output, until the split has begun waiting.
 */
class SplitWhileMergingTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));
  private static final String DIR = Tablet.dirOf("tbl", "t1");
  private static final byte[] ALL = new byte[0];

  @TempDir
  Path root;

  private final Queue<String> failures = new ConcurrentLinkedQueue<>();

  @Test
  void aSplitWaitsForARunningMergeWhoseOutputTheChildrenThenShare() throws Exception {
    HoldingStorage storage = new HoldingStorage(new FileStorage(root));
    TabletServer server = open(storage);
    Tablet t = server.createTablet("tbl", "t1", ALL, ALL);
    List<String> rows = new ArrayList<>(LateManifestCommitTest.write(t, 0, 10));
    t.freezeAndFlush().join();
    rows.addAll(LateManifestCommitTest.write(t, 10, 20));
    t.freezeAndFlush().join();
    rows.addAll(LateManifestCommitTest.write(t, 20, 25)); // in the memtable: the split flushes them

    storage.holdNextSSTable();
    CompletableFuture<Void> merge = t.majorCompact();
    String output = storage.awaitHeld();
    CompletableFuture<List<Tablet>> split = new CompletableFuture<>();
    Thread splitter = new Thread(() -> {
      try {
        split.complete(server.split("t1", b("r10"), "t2", "t3"));
      } catch (IOException | RuntimeException e) {
        split.completeExceptionally(e);
      }
    }, "splitter");
    splitter.start();
    awaitParkedOnALock(splitter);
    storage.release();

    TabletFlushes.join(merge);
    assertEquals(2, split.get(60, TimeUnit.SECONDS).size());
    assertEquals(List.of(), List.copyOf(failures), "background failures");
    for (String child : List.of("t2", "t3")) {
      List<String> named = new ArrayList<>();
      ManifestCodec.read(storage, Tablet.dirOf("tbl", child)).groups().values()
          .forEach(refs -> refs.forEach(r -> named.add(r.path())));
      assertTrue(named.contains(output), child + " shares the merge's output: " + named);
      assertEquals(List.of(), named.stream().filter(p -> !storage.exists(p)).toList(),
          "files " + child + " names, deleted");
    }
    assertRows(server, rows);
    server.close();
    TabletServer again = open(new FileStorage(root));
    try {
      assertRows(again, rows);
    } finally {
      again.close();
    }
  }

  private TabletServer open(Storage storage) throws IOException {
    return TabletServer.open(storage, TabletServer.Options.defaults("n1"), () -> 5_000_000L, t -> SCHEMA,
        (what, e) -> failures.add(what + ": " + e));
  }

  /** Every row reads back from the child that holds it. */
  private static void assertRows(TabletServer server, List<String> rows) throws IOException {
    List<String> lost = new ArrayList<>();
    for (String row : rows) {
      Tablet child = server.tablet(row.compareTo("r10") < 0 ? "t2" : "t3");
      if (child.read(b(row), ReadFilter.all()).isEmpty()) {
        lost.add(row);
      }
    }
    assertEquals(List.of(), lost, "acknowledged rows lost");
  }

  /**
   * Waits until {@code t} is parked on a lock of java.util.concurrent: the split, on the
   * tablet's merge lock, which the held merge has (its other waits, for its flush, are on a
   * future).
   */
  private static void awaitParkedOnALock(Thread t) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!(LockSupport.getBlocker(t) instanceof AbstractQueuedSynchronizer)) {
      assertTrue(t.isAlive(), "the split ended without waiting for the merge");
      assertTrue(System.nanoTime() < deadline, "the split never waited for the merge");
      Thread.sleep(1);
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Once told, holds the next creation of an SSTable in the tablet's folder until released. */
  private static final class HoldingStorage extends ForwardingStorage {
    private final AtomicBoolean armed = new AtomicBoolean();
    private final CompletableFuture<String> held = new CompletableFuture<>();
    private final CountDownLatch released = new CountDownLatch(1);

    HoldingStorage(Storage delegate) {
      super(delegate);
    }

    void holdNextSSTable() {
      armed.set(true);
    }

    /** Waits until a creation is held; returns its path. */
    String awaitHeld() throws Exception {
      return held.get(60, TimeUnit.SECONDS);
    }

    void release() {
      released.countDown();
    }

    @Override
    public WritableFile create(String path) throws IOException {
      if (Storage.parent(path).equals(DIR) && path.endsWith(".sst") && armed.compareAndSet(true, false)) {
        held.complete(path);
        try {
          released.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while held");
        }
      }
      return delegate.create(path);
    }
  }
}
