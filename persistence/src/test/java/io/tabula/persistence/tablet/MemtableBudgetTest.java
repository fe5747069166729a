package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FaultyStorage;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.wal.CommitLog;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's memtables together stay within its budget however many tablets share it: the
 * largest are flushed early, and writes wait at the whole budget until flushes catch up.
 */
class MemtableBudgetTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));
  private static final long BUDGET = MemtableBudget.MIN_BYTES;
  private static final byte[] VALUE = new byte[1000];

  @TempDir
  Path dir;

  private final Queue<String> failures = new ConcurrentLinkedQueue<>();
  private final List<Tablet> tablets = new ArrayList<>();
  private final ExecutorService merges = Executors.newSingleThreadExecutor();
  private CommitLog log;
  private TabletServer server;

  /**
   * The flush executor of the first test: a real executor whose tasks wait until the test
   * runs them, so the test sees the memtables while no flush has run.
   */
  private static final class HeldFlushes implements Executor {
    private final ArrayDeque<Runnable> queued = new ArrayDeque<>();

    @Override
    public synchronized void execute(Runnable r) {
      queued.add(r);
    }

    /** Runs every queued flush (and any they queue) on the caller's thread. */
    void runAll() {
      for (Runnable r = next(); r != null; r = next()) {
        r.run();
      }
    }

    private synchronized Runnable next() {
      return queued.poll();
    }
  }

  @AfterEach
  void stop() throws IOException {
    tablets.forEach(Tablet::closeWithoutFlush);
    if (log != null) {
      log.close();
    }
    if (server != null) {
      server.abandon();
    }
    merges.shutdownNow();
  }

  private static RowMutation put(int tablet, int row) {
    return RowMutation.of(key(tablet, row), new Mutation.SetCell("f", "q".getBytes(StandardCharsets.UTF_8), 1000,
        VALUE));
  }

  private static byte[] key(int tablet, int row) {
    return String.format("t%02d-%06d", tablet, row).getBytes(StandardCharsets.UTF_8);
  }

  private static long memtables(Tablet t) {
    return TabletSizes.memtableBytes(t.currentVersion());
  }

  private long total() {
    return tablets.stream().mapToLong(MemtableBudgetTest::memtables).sum();
  }

  private static int frozen(Tablet t) {
    return t.currentVersion().frozen.size();
  }

  /** Writes rows {@code [from, to)} to tablet {@code i} without waiting; false at the first write refused to wait. */
  private boolean write(int i, int from, int to) {
    for (int r = from; r < to; r++) {
      CompletableFuture<Void> done = tablets.get(i).tryApply(put(i, r));
      if (done == null) {
        return false;
      }
      done.join();
    }
    return true;
  }

  @Test
  void theLargestMemtablesFlushFirstAndWritesWaitAtTheWholeBudget() throws IOException {
    Storage storage = new FileStorage(dir);
    log = CommitLog.open(storage, "logs/n1", new CommitLogOptions(8 << 20, Durability.OS_BUFFERED));
    HeldFlushes flushes = new HeldFlushes();
    // A tablet alone would hold 64 MiB before freezing: only the node's budget freezes here.
    TabletEnv env = new TabletEnv(storage, log, BlockCache.create(1 << 20), new MemtableBudget(BUDGET), flushes,
        merges, () -> 5_000_000L, TabletOptions.defaults(), () -> { }, (what, e) -> failures.add(what + ": " + e));
    for (int i = 0; i < 4; i++) {
      byte[] start = i == 0 ? new byte[0] : String.format("t%02d", i).getBytes(StandardCharsets.UTF_8);
      byte[] end = i == 3 ? new byte[0] : String.format("t%02d", i + 1).getBytes(StandardCharsets.UTF_8);
      tablets.add(Tablet.create(env, SCHEMA, "tbl", "t" + i, start, end));
    }
    // About 700 KiB: under three quarters of the 1 MiB budget, nothing is frozen.
    assertTrue(write(0, 0, 380));
    assertTrue(write(1, 0, 180));
    assertTrue(write(2, 0, 100));
    assertTrue(total() < BUDGET / 100 * MemtableBudget.FLUSH_AT_PERCENT, "total " + total());
    tablets.forEach(t -> assertEquals(0, frozen(t), t.toString()));

    // Past three quarters, the largest memtable (tablet 0's) is frozen for a flush, the others not.
    assertTrue(write(3, 0, 200));
    assertEquals(1, frozen(tablets.get(0)));
    assertEquals(0, frozen(tablets.get(1)) + frozen(tablets.get(2)) + frozen(tablets.get(3)));

    // With no flush done, writes go on up to the budget, then wait.
    int written = 0;
    while (write(1, 180 + written, 181 + written)) {
      written++;
      assertTrue(written < 2000, "writes never waited; memtables hold " + total());
    }
    long atTheLimit = total();
    assertTrue(atTheLimit >= BUDGET && atTheLimit < BUDGET + new MemtableBudget(BUDGET).checkEvery() + 2 * VALUE.length,
        "writes waited with the memtables at " + atTheLimit + " bytes, budget " + BUDGET);
    assertNull(tablets.get(2).tryApply(put(2, 100)), "every tablet's writes wait, not only the largest's");

    // The flushes run: memory goes back, writes go on, and nothing written is lost.
    flushes.runAll();
    assertTrue(total() < BUDGET / 100 * MemtableBudget.FLUSH_TO_PERCENT + (64 << 10), "total " + total());
    assertFalse(tablets.get(0).files().isEmpty(), "tablet 0's memtable went to an SSTable");
    assertNotNull(tablets.get(2).tryApply(put(2, 100)));
    assertTrue(write(1, 180 + written, 200 + written));
    for (int[] tr : new int[][] {{0, 0}, {0, 379}, {1, 180 + written}, {2, 99}, {3, 199}}) {
      assertTrue(tablets.get(tr[0]).read(key(tr[0], tr[1]), ReadFilter.all()).isPresent(), Arrays.toString(tr));
    }
    assertTrue(failures.isEmpty(), failures.toString());
  }

  @Test
  void manyTabletsWrittenAtOnceStayWithinTheBudgetAndKeepEveryWrite() throws Exception {
    // A tablet alone would hold 64 MiB before freezing; 16 tablets share a 1 MiB budget.
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 2,
        new CommitLogOptions(8 << 20, Durability.OS_BUFFERED), TabletOptions.defaults(), BUDGET);
    server = TabletServer.open(new FileStorage(dir), o, () -> 5_000_000L, t -> SCHEMA,
        (what, e) -> failures.add(what + ": " + e));
    int n = 16;
    List<Tablet> mine = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      byte[] start = i == 0 ? new byte[0] : String.format("t%02d", i).getBytes(StandardCharsets.UTF_8);
      byte[] end = i == n - 1 ? new byte[0] : String.format("t%02d", i + 1).getBytes(StandardCharsets.UTF_8);
      mine.add(server.createTablet("tbl", "t" + i, start, end));
    }
    // Four writers, each over every tablet in turn, 8 MiB in all; writes that must wait do.
    int rows = 512;
    long[] most = new long[1];
    ExecutorService writers = Executors.newFixedThreadPool(4);
    try {
      List<CompletableFuture<Void>> done = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        int first = w;
        done.add(CompletableFuture.runAsync(() -> {
          for (int r = first; r < rows; r += 4) {
            for (int i = 0; i < n; i++) {
              mine.get(i).apply(put(i, r)).join();
            }
            long now = mine.stream().mapToLong(MemtableBudgetTest::memtables).sum();
            synchronized (most) {
              most[0] = Math.max(most[0], now);
            }
          }
        }, writers));
      }
      CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(120, java.util.concurrent.TimeUnit.SECONDS);
    } finally {
      writers.shutdownNow();
    }
    // Up to two check steps, and a write of each writer, over the budget (see MemtableBudget).
    long step = new MemtableBudget(BUDGET).checkEvery();
    assertTrue(most[0] < BUDGET + 2 * step + 4 * 1100, "the memtables held up to " + most[0] + " bytes");
    assertTrue(mine.stream().filter(t -> !t.files().isEmpty()).count() >= n / 2, "most tablets flushed early");
    for (int i = 0; i < n; i++) {
      for (int r = 0; r < rows; r += 37) {
        assertTrue(mine.get(i).read(key(i, r), ReadFilter.all()).isPresent(), "tablet " + i + " row " + r);
      }
    }
    assertTrue(failures.isEmpty(), failures.toString());
  }

  @Test
  void writesWaitingForTheBudgetGoOnOnceAFailedFlushCanBeDoneAgain() throws Exception {
    FaultyStorage disk = new FaultyStorage(new FileStorage(dir));
    // The log on the same folder but not through the failing storage: only flushes fail here.
    log = CommitLog.open(new FileStorage(dir), "logs/n1", new CommitLogOptions(8 << 20, Durability.OS_BUFFERED));
    TabletEnv env = new TabletEnv(disk, log, BlockCache.create(1 << 20), new MemtableBudget(BUDGET), merges, merges,
        () -> 5_000_000L, TabletOptions.defaults(), () -> { }, (what, e) -> failures.add(what + ": " + e));
    tablets.add(Tablet.create(env, SCHEMA, "tbl", "t0", new byte[0], "t01".getBytes(StandardCharsets.UTF_8)));
    tablets.add(Tablet.create(env, SCHEMA, "tbl", "t1", "t01".getBytes(StandardCharsets.UTF_8), new byte[0]));
    disk.setSpaceLeft(0);
    // Tablet 0 fills the budget; its flushes fail on the full disk.
    int row = 0;
    try {
      while (write(0, row, row + 1)) {
        row++;
        assertTrue(row < 5000, "writes never waited");
      }
    } catch (TabletUnavailableException flushesFail) {
      // Its own writes are refused once its flush failed.
    }
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (failures.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertFalse(failures.isEmpty(), "a flush failed on the full disk");
    assertNull(tablets.get(1).tryApply(put(1, 0)), "another tablet's writes wait for the budget");
    // Space comes back: nothing writes to tablet 0, yet the budget has its frozen memtable
    // flushed again, and the other tablet's writes go on.
    disk.unlimitedSpace();
    CompletableFuture<Void> accepted = null;
    while (accepted == null && System.nanoTime() < deadline) {
      accepted = tablets.get(1).tryApply(put(1, 0));
      Thread.sleep(10);
    }
    assertNotNull(accepted, "writes still waited 10 s after the disk had room again");
    accepted.join();
    assertFalse(tablets.get(0).files().isEmpty(), "tablet 0's memtable was flushed after all");
    assertTrue(tablets.get(0).read(key(0, 0), ReadFilter.all()).isPresent());
  }
}
