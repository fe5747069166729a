package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.changes.Change;
import io.tabula.persistence.changes.ChangeLog;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tablet's change log (docs/change-streams.md): every acknowledged write is one change, in
 * sequence order with non-decreasing commit times, whether it is read from the memtables or
 * from segments, across flushes, crashes (the tail replayed from the log, with the commit
 * times the log recorded) and a split, after which the parent's log ends with its children.
 */
class TabletChangesTest {
  private static final long DAY = 86_400_000_000L;
  private static final TableSchema KEEPS = TableSchema.of(ColumnFamily.of("f")).withChangeRetention(DAY);

  @TempDir
  Path dir;

  private TabletServer server;
  private FileStorage storage;
  private final AtomicLong clock = new AtomicLong(1_700_000_000_000_000L);
  private TableSchema schema = KEEPS;
  private final List<String> reported = new java.util.concurrent.CopyOnWriteArrayList<>();

  private TabletServer open() throws IOException {
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(1 << 20,
        Durability.FSYNC), TabletOptions.defaults().withMemtableBytes(8192));
    storage = new FileStorage(dir);
    server = TabletServer.open(storage, o, clock::get, t -> schema, (what, e) -> reported.add(what + ": "
        + e.getMessage()));
    return server;
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.abandon();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static RowMutation put(String row, String value) {
    return RowMutation.of(b(row), new Mutation.SetCell("f", b("q"), Mutation.SERVER_TIME, b(value)));
  }

  /** Every change after {@code after}, read as a change stream's reader reads them: segments while behind, then memory. */
  static List<Change> readAll(Tablet t, FileStorage storage, long after) throws IOException {
    List<Change> out = new ArrayList<>();
    ChangeLog.Cursor cursor = null;
    while (true) {
      TabletChangeLog.InMemory mem = t.changes().read(after, 4096);
      List<Change> batch = mem.changes();
      if (!mem.complete()) {
        ChangeLog.Batch seg = ChangeLog.readAfter(storage, t.changes().folder(), after, 4096, cursor);
        if (!seg.changes().isEmpty()) {
          batch = seg.changes();
          cursor = seg.next();
        }
      }
      if (batch.isEmpty()) {
        return out;
      }
      out.addAll(batch);
      after = batch.get(batch.size() - 1).lastSequence();
    }
  }

  private static void assertChanges(List<String> written, List<Change> read) {
    List<String> values = new ArrayList<>();
    long lastSeq = 0;
    long lastCommit = 0;
    for (Change c : read) {
      assertTrue(c.sequence() > lastSeq, "in sequence order, each once: " + c.sequence() + " after " + lastSeq);
      assertTrue(c.commitMicros() >= lastCommit, "commit times never fall");
      lastSeq = c.lastSequence();
      lastCommit = c.commitMicros();
      Mutation.SetCell s = (Mutation.SetCell) c.mutation().mutations().get(0);
      assertEquals(c.commitMicros(), s.timestamp(), "a server-time cell takes the commit time");
      values.add(new String(s.value(), StandardCharsets.UTF_8));
    }
    for (int i = 0; i < Math.min(written.size(), values.size()); i++) {
      if (!written.get(i).equals(values.get(i))) {
        throw new AssertionError("change " + i + " is " + clip(values.get(i)) + ", the write was " + clip(written.get(i)));
      }
    }
    assertEquals(written.size(), values.size(), "one change per write");
  }

  private static String clip(String s) {
    return s.length() > 12 ? s.substring(0, 12) + "…" : s;
  }

  @Test
  void everyAcknowledgedWriteIsOneChangeAcrossFlushesAndCrashes() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    Random rnd = new Random(7);
    List<String> written = new ArrayList<>();
    for (int i = 0; i < 1500; i++) {
      clock.addAndGet(rnd.nextInt(3) * 1000L);
      String v = "v" + i + "-" + "x".repeat(rnd.nextInt(200));
      t.apply(put("row" + rnd.nextInt(50), v)).join();
      written.add(v);
      int what = rnd.nextInt(100);
      if (what < 2) {
        server.abandon(); // no flush: the tail comes back from the log
        t = open().tablet("t1");
      } else if (what < 4) {
        t.freezeAndFlush().join();
      }
    }
    assertFalse(ChangeLog.segments(storage, t.changes().folder()).isEmpty(), "full memtables were flushed");
    assertChanges(written, readAll(t, storage, 0));
    List<Change> tail = readAll(t, storage, 0).subList(700, 1500);
    assertChanges(written.subList(701, 1500), readAll(t, storage, tail.get(0).lastSequence()));
  }

  @Test
  void aWaitingReaderWakesAtTheNextWrite() throws Exception {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(put("a", "1")).join();
    long seen = t.changes().read(0, 1 << 20).changes().get(0).lastSequence();
    CompletableFuture<Void> woke = t.changes().visibleAfter(seen, 60_000);
    assertFalse(woke.isDone());
    CompletableFuture<Void> timedOut = t.changes().visibleAfter(seen, 10);
    timedOut.get(5, TimeUnit.SECONDS); // a waiter whose time is up goes: it is not woken, nor kept
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (t.sequence().waiting() > 1 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertEquals(1, t.sequence().waiting(), "the timed-out waiter is no longer held");
    t.apply(put("b", "2")).join();
    woke.get(5, TimeUnit.SECONDS);
    assertEquals(1, t.changes().read(seen, 1 << 20).changes().size());
  }

  @Test
  void aCaughtUpReaderGetsAWatermarkNoLaterWriteGoesBelow() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(put("a", "1")).join();
    TabletChangeLog.InMemory mem = t.changes().read(0, 1 << 20);
    long watermark = t.changes().read(mem.changes().get(0).lastSequence(), 1 << 20).watermarkMicros();
    assertTrue(watermark >= mem.changes().get(0).commitMicros());
    clock.addAndGet(-5_000_000); // a clock stepped back: the next write's commit time still is not below
    t.apply(put("b", "2")).join();
    assertTrue(readAll(t, storage, 0).get(1).commitMicros() >= watermark);
  }

  @Test
  void aWriteCommittedBeforeTheOneAheadOfItIsReportedOnce() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(put("a", "1")).join();
    long early = clock.get() - 5_000_000;
    t.tryApply(put("a", "2"), early).join(); // a time taken long before, applied after a later write
    t.tryApply(put("a", "3"), early).join();
    assertEquals(1, reported.size(), "reported once: " + reported);
    assertTrue(reported.get(0).contains("more than one thread"), reported.get(0));
  }

  @Test
  void aSplitParentsLogIsCompleteAndNamesItsChildren() throws IOException {
    Tablet t = open().createTablet("tbl", "p", new byte[0], new byte[0]);
    List<String> written = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      String v = "v" + i;
      t.apply(put("row" + (char) ('a' + i), v)).join();
      written.add(v);
    }
    List<Tablet> kids = server.split("p", b("rowk"), "l", "r");
    List<ChangeLineage.Successor> next = ChangeLineage.successors(storage, "tbl", "p", id -> false);
    assertEquals(List.of("l", "r"), next.stream().map(ChangeLineage.Successor::tabletId).toList());
    assertArrayEquals(b("rowk"), next.get(0).endRow());
    assertArrayEquals(b("rowk"), next.get(1).startRow());
    String parentLog = ChangeLog.folder(Tablet.dirOf("tbl", "p"));
    List<Change> parent = ChangeLog.readAfter(storage, parentLog, 0, Long.MAX_VALUE, null).changes();
    assertChanges(written, parent);
    assertEquals(parent.get(parent.size() - 1).lastSequence(), next.get(0).startsAfter());
    kids.get(1).apply(put("rowz", "after")).join();
    assertChanges(List.of("after"), readAll(kids.get(1), storage, next.get(1).startsAfter()));
    assertNull(ChangeLineage.successors(storage, "tbl", "r", id -> false), "a served tablet has no successors");
  }

  @Test
  void aMergeParentThatNeverTookAWriteStillNamesTheMergedTablet() throws IOException {
    open().createTablet("tbl", "l", new byte[0], b("m"));
    server.createTablet("tbl", "r", b("m"), new byte[0]).apply(put("x", "1")).join();
    server.closeTablet("l");
    server.closeTablet("r");
    server.writeMergedManifest("tbl", "l", "r", "lr");
    for (String parent : List.of("l", "r")) {
      List<ChangeLineage.Successor> next = ChangeLineage.successors(storage, "tbl", parent, "lr"::equals);
      assertEquals(List.of("lr"), next == null ? null : next.stream().map(ChangeLineage.Successor::tabletId).toList(),
          "parent " + parent + "'s readers go on in the merged tablet");
    }
  }

  @Test
  void aSplitParentThatNeverTookAWriteHasAChangeLogFolderSoTheSweepKeepsItsManifest() throws IOException {
    open().createTablet("tbl", "e", new byte[0], new byte[0]);
    server.split("e", b("m"), "e1", "e2");
    assertTrue(storage.exists(ChangeLog.folder(Tablet.dirOf("tbl", "e"))),
        "the folder the master's sweep looks at to keep a retired tablet's manifest (FileSweeper)");
    assertEquals(List.of("e1", "e2"), ChangeLineage.successors(storage, "tbl", "e", id -> false).stream()
        .map(ChangeLineage.Successor::tabletId).toList());
  }

  @Test
  void aTableThatKeepsNoChangesWritesNoLogAndTurningItOffDropsTheLog() throws IOException {
    schema = TableSchema.of(ColumnFamily.of("f"));
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(put("a", "1")).join();
    t.freezeAndFlush().join();
    assertFalse(storage.exists(t.changes().folder()));
    assertTrue(t.changes().read(0, 1 << 20).changes().isEmpty());
    t.updateSchema(KEEPS);
    t.apply(put("a", "2")).join();
    t.freezeAndFlush().join();
    assertEquals(1, ChangeLog.segments(storage, t.changes().folder()).size());
    t.updateSchema(TableSchema.of(ColumnFamily.of("f")));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (storage.exists(t.changes().folder()) && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertFalse(storage.exists(t.changes().folder()), "the log is dropped in the background");
  }

  @Test
  void segmentsPastTheRetentionGoAtTheNextFlush() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(put("a", "old")).join();
    t.freezeAndFlush().join();
    clock.addAndGet(DAY + 1_000_000);
    t.apply(put("a", "new")).join();
    t.freezeAndFlush().join();
    List<ChangeLog.Segment> left = ChangeLog.segments(storage, t.changes().folder());
    assertEquals(1, left.size());
    assertChanges(List.of("new"), ChangeLog.readAfter(storage, t.changes().folder(), 0, 1 << 20, null).changes());
  }
}
