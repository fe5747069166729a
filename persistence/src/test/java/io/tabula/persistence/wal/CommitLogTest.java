package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FaultyStorage;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.ForwardingWritableFile;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommitLogTest {
  private static final String DIR = "logs/n1";
  /** Segments appended to, never prepared: for tests that damage a segment at a known place. */
  static final CommitLogOptions PLAIN = new CommitLogOptions(64L << 20, Durability.FSYNC, false);
  /** Small prepared segments, so that making one is quick. */
  static final CommitLogOptions PREPARED = new CommitLogOptions(1 << 20, Durability.FSYNC, true);

  @TempDir
  Path root;

  record Rec(String tablet, long seq, String payload) {}

  private static byte[] p(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Reads the folder as a restarted process would (which writes nothing until it is sent a record). */
  private static List<Rec> replay(Storage storage) throws IOException {
    try (CommitLog log = CommitLog.open(storage, DIR, PLAIN)) {
      List<Rec> out = new ArrayList<>();
      log.replay((t, s, b) -> out.add(new Rec(t, s, new String(b, StandardCharsets.UTF_8))));
      return out;
    }
  }

  private static ReplayResult replayResult(Storage storage, List<Rec> out) throws IOException {
    try (CommitLog log = CommitLog.open(storage, DIR, PLAIN)) {
      return log.replay((t, s, b) -> out.add(new Rec(t, s, new String(b, StandardCharsets.UTF_8))));
    }
  }

  @Test
  void recordsComeBackInOrderAcrossSegmentRolls() throws IOException {
    FileStorage storage = new FileStorage(root);
    List<Rec> expected = new ArrayList<>();
    try (CommitLog log = CommitLog.open(storage, DIR, new CommitLogOptions(4096, Durability.FSYNC))) {
      for (int i = 0; i < 300; i++) {
        Rec r = new Rec("t" + (i % 3), i, "payload-" + i + "-" + "x".repeat(i % 50));
        expected.add(r);
        log.append(r.tablet(), r.seq(), p(r.payload())).join();
      }
    }
    assertTrue(storage.list(DIR).size() > 3, "small segments roll: " + storage.list(DIR));
    List<Rec> got = new ArrayList<>();
    ReplayResult result = replayResult(storage, got);
    assertEquals(expected, got);
    assertTrue(result.clean(), result.toString());
    assertEquals(300, result.records());
  }

  /** Counts fsyncs and remembers how far each one reached. */
  static final class CountingStorage extends ForwardingStorage {
    final AtomicLong syncs = new AtomicLong();
    final AtomicLong syncedTo = new AtomicLong();

    final FileStorage inner;

    CountingStorage(FileStorage inner) {
      super(inner);
      this.inner = inner;
    }

    @Override
    public WritableFile create(String path) throws IOException {
      return new ForwardingWritableFile(delegate.create(path)) {
        @Override
        public void sync() throws IOException {
          delegate.sync();
          syncs.incrementAndGet();
          syncedTo.set(delegate.position());
        }
      };
    }
  }

  @Test
  void concurrentWritersShareFsyncsAndNothingIsAcknowledgedBeforeItsFsync() throws Exception {
    CountingStorage storage = new CountingStorage(new FileStorage(root));
    int threads = 8;
    int perThread = 200;
    Map<String, Long> syncsSeenAtAck = new ConcurrentHashMap<>();
    try (CommitLog log = CommitLog.open(storage, DIR, CommitLogOptions.defaults())) {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<?>> jobs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          String tablet = "t" + t;
          jobs.add(pool.submit(() -> {
            List<CompletableFuture<Void>> mine = new ArrayList<>();
            for (int i = 0; i < perThread; i++) {
              long syncsBefore = storage.syncs.get();
              String key = tablet + "/" + i;
              mine.add(log.append(tablet, i, p(key)).thenRun(() -> {
                // The fsync that covers this record has returned: the count moved since it was queued.
                assertTrue(storage.syncs.get() > syncsBefore, key + " acknowledged before any new fsync");
                syncsSeenAtAck.put(key, storage.syncs.get());
              }));
              if (mine.size() == 20) {
                mine.forEach(CompletableFuture::join);
                mine.clear();
              }
            }
            mine.forEach(CompletableFuture::join);
            return null;
          }));
        }
        for (Future<?> j : jobs) {
          j.get();
        }
      } finally {
        pool.shutdownNow();
      }
    }
    assertEquals(threads * perThread, syncsSeenAtAck.size());
    long syncs = storage.syncs.get();
    assertTrue(syncs < threads * perThread, "group commit: " + syncs + " fsyncs for " + threads * perThread
        + " records");
    List<Rec> got = replay(storage.inner);
    assertEquals(threads * perThread, got.size());
    for (int t = 0; t < threads; t++) {
      String tablet = "t" + t;
      List<Long> seqs = got.stream().filter(r -> r.tablet().equals(tablet)).map(Rec::seq).toList();
      for (int i = 0; i < seqs.size(); i++) {
        assertEquals(i, seqs.get(i), "one writer's records stay in call order");
      }
    }
  }

  /**
   * Odd seeds append to a plain segment; even ones write over a prepared one, with the next
   * prepared (blank) segment already there at the crash, so the torn segment is not the last
   * file of the folder.
   */
  @Test
  void aTornTailIsDroppedReportedAndCutSoLaterSegmentsDoNotMakeItCorruption() throws Exception {
    int torn = 0;
    int keptWhole = 0;
    for (long seed = 1; seed <= 16; seed++) {
      Path dir = root.resolve("seed-" + seed);
      FaultyStorage storage = new FaultyStorage(new FileStorage(dir));
      boolean prepared = seed % 2 == 0;
      CommitLog log = CommitLog.open(storage, DIR, prepared ? PREPARED : PLAIN);
      if (prepared) {
        assertTrue(log.awaitPreparedSegment(30_000), "segment 1 prepared");
      }
      for (int i = 0; i < 10; i++) {
        log.append("t", i, p("acked-" + i)).join();
      }
      if (prepared) {
        assertTrue(log.awaitPreparedSegment(30_000), "segment 2 prepared");
      }
      storage.stallSyncs(true);
      List<CompletableFuture<Void>> pending = new ArrayList<>();
      for (int i = 10; i < 15; i++) {
        pending.add(log.append("t", i, p("in-flight-" + i + "-" + "y".repeat(200))));
      }
      sleep(20);
      storage.crash(new Random(seed * 0x9E3779B97F4A7C15L));
      try {
        log.close();
      } catch (IOException expectedAfterCrash) {
        // the dead process could not sync its last batch
      }
      pending.forEach(f -> assertTrue(f.isCompletedExceptionally(), "nothing unsynced was acknowledged"));

      FileStorage after = new FileStorage(dir);
      List<Rec> got = new ArrayList<>();
      ReplayResult r = replayResult(after, got);
      assertTrue(got.size() >= 10 && got.size() <= 15, "every acknowledged record, maybe some in flight: " + got);
      for (int i = 0; i < got.size(); i++) {
        assertEquals(new Rec("t", i, i < 10 ? "acked-" + i : "in-flight-" + i + "-" + "y".repeat(200)), got.get(i));
      }
      if (!r.clean()) {
        torn++;
        assertEquals(DIR + "/000001.log", r.tornSegment());
        assertTrue(r.tornBytesSkipped() > 0);
        assertTrue(r.tornBytesSkipped() < 5 * 300, "the torn batch, not the zeros after it: " + r);
      }
      if (prepared) {
        assertEquals(List.of("000001.log", "000002.log"), after.list(DIR), "the torn segment, and a blank one");
      }
      keptWhole += got.size() > 10 ? 1 : 0;
      // More segments after the cut one: it is sealed now and must read cleanly.
      try (CommitLog again = CommitLog.open(after, DIR, CommitLogOptions.defaults())) {
        again.replay((t, s, b) -> { });
        again.append("t", 100, p("after")).join();
      }
      List<Rec> third = replay(after);
      assertEquals(got.size() + 1, third.size(), "seed " + seed);
    }
    assertTrue(torn > 0 && keptWhole > 0, "the seeds tear some tails and keep others: " + torn + " torn, "
        + keptWhole + " kept whole");
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void writeBatches(Storage storage, int batches) throws IOException {
    try (CommitLog log = CommitLog.open(storage, DIR, PLAIN)) {
      for (int i = 0; i < batches; i++) {
        log.append("t", i, p("record-" + i + "-" + "z".repeat(40))).join();
      }
    }
  }

  @Test
  void aFlippedByteMidSegmentIsCorruptionWithFileAndOffset() throws IOException {
    FileStorage storage = new FileStorage(root);
    writeBatches(storage, 6);
    String seg = DIR + "/000001.log";
    // Header 24 bytes, then batches of one record each; flip a byte in the second record's payload.
    int batch = CommitLogFormat.BATCH_HEADER_SIZE + CommitLogFormat.RECORD_BODY + 1 + 1 + 1 + 8 + 49;
    long second = CommitLogFormat.HEADER_SIZE + batch;
    FaultyStorage.damage(storage, seg, second + batch - 5);
    CorruptionException e = assertThrows(CorruptionException.class, () -> replay(storage));
    assertEquals(seg, e.file());
    assertEquals(second + CommitLogFormat.BATCH_HEADER_SIZE, e.offset(), e.getMessage());
  }

  @Test
  void damageInASealedSegmentIsCorruptionEvenAtItsEnd() throws IOException {
    FileStorage storage = new FileStorage(root);
    writeBatches(storage, 3);
    writeBatches(storage, 3); // a second process: segment 000002
    String first = DIR + "/000001.log";
    FaultyStorage.damage(storage, first, storage.size(first) - 2);
    CorruptionException e = assertThrows(CorruptionException.class, () -> replay(storage));
    assertEquals(first, e.file());
    assertTrue(e.getMessage().contains("sealed"), e.getMessage());

    FileStorage other = new FileStorage(root.resolve("header"));
    writeBatches(other, 2);
    writeBatches(other, 2);
    FaultyStorage.damage(other, DIR + "/000001.log", 3);
    CorruptionException h = assertThrows(CorruptionException.class, () -> replay(other));
    assertEquals(0, h.offset());
  }

  @Test
  void aFailedFsyncLosesTheLogForGoodAndARecoverySeesEveryAcknowledgedRecord() throws IOException {
    FaultyStorage storage = new FaultyStorage(new FileStorage(root));
    CommitLog log = CommitLog.open(storage, DIR, PLAIN); // it counts the folder's files: none made behind its back
    log.append("t", 1, p("one")).join();
    storage.failSyncs(true);
    CompletionException e = assertThrows(CompletionException.class, () -> log.append("t", 2, p("two")).join());
    assertInstanceOf(LogSyncFailedException.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains("fsync"), e.getCause().getMessage());
    assertInstanceOf(LogSyncFailedException.class, log.whenLost().join());
    assertTrue(log.isLost());
    assertFalse(log.isFenced(), "a failed fsync is not a fence");
    // The disk works again, but what the failed fsync dropped cannot be known: nothing more is taken.
    storage.failSyncs(false);
    CompletionException later = assertThrows(CompletionException.class, () -> log.append("t", 3, p("three")).join());
    assertTrue(LogLostException.in(later), later.toString());
    int files = storage.list(DIR).size();
    log.deleteObsoleteSegments(id -> Long.MAX_VALUE);
    assertEquals(files, storage.list(DIR).size(), "a lost log deletes none of its segments");
    assertThrows(IOException.class, log::close);
    // A recovery (another node) sees the acknowledged record; the failed one may be there, as
    // its outcome was never acknowledged; the refused one is not.
    List<Rec> read = replay(new FileStorage(root));
    assertEquals(new Rec("t", 1, "one"), read.get(0));
    assertTrue(read.equals(List.of(new Rec("t", 1, "one")))
        || read.equals(List.of(new Rec("t", 1, "one"), new Rec("t", 2, "two"))), read.toString());
  }

  @Test
  void aFailedFsyncOfABufferedLogAtARollLosesTheLog() throws IOException {
    FaultyStorage storage = new FaultyStorage(new FileStorage(root));
    CommitLog log = CommitLog.open(storage, DIR,
        new CommitLogOptions(64 * 1024, Durability.OS_BUFFERED));
    log.append("t", 1, p("one")).join();
    storage.failSyncs(true);
    byte[] big = new byte[70 * 1024];
    log.append("t", 2, big).join(); // buffered: acknowledged when written; the roll's sync then fails
    assertInstanceOf(LogSyncFailedException.class, log.whenLost().join());
    assertTrue(LogLostException.in(assertThrows(CompletionException.class, () -> log.append("t", 3, p("x")).join())));
    storage.failSyncs(false);
    assertThrows(IOException.class, log::close);
  }

  @Test
  void aFullDiskFailsTheWriteAndTheLogRecovers() throws IOException {
    FaultyStorage storage = new FaultyStorage(new FileStorage(root));
    try (CommitLog log = CommitLog.open(storage, DIR, CommitLogOptions.defaults())) {
      log.append("t", 1, p("one")).join();
      storage.setSpaceLeft(5);
      CompletionException e = assertThrows(CompletionException.class, () -> log.append("t", 2, p("two")).join());
      assertTrue(e.getCause().getMessage().contains("No space left"), e.getCause().getMessage());
      storage.unlimitedSpace();
      log.append("t", 3, p("three")).join();
    }
    assertEquals(List.of(new Rec("t", 1, "one"), new Rec("t", 3, "three")), replay(new FileStorage(root)));
  }

  @Test
  void obsoleteSegmentsGoOnlyWhenEveryTabletIsPastThem() throws IOException {
    FileStorage storage = new FileStorage(root);
    CommitLogOptions small = new CommitLogOptions(4096, Durability.FSYNC, false); // every file a sealed segment
    try (CommitLog log = CommitLog.open(storage, DIR, small)) {
      for (int i = 0; i < 200; i++) {
        log.append(i < 100 ? "a" : "b", i, p("r" + i + "-" + "w".repeat(60))).join();
      }
      List<String> sealed = log.sealedSegments();
      assertTrue(sealed.size() > 3);
      log.deleteObsoleteSegments(t -> t.equals("a") ? 99 : -1);
      List<String> left = storage.list(DIR);
      assertFalse(left.isEmpty());
      assertTrue(left.size() < sealed.size() + 1, "segments holding only tablet a's records went: " + left);
      log.deleteObsoleteSegments(t -> Long.MAX_VALUE);
      assertEquals(0, log.sealedSegments().size());
    }
    try (CommitLog log = CommitLog.open(storage, DIR, small)) {
      log.deleteObsoleteSegments(t -> Long.MAX_VALUE);
      assertFalse(storage.list(DIR).isEmpty(), "an old segment stays until replay has read it");
      log.replay((t, s, b) -> { });
      log.deleteObsoleteSegments(t -> Long.MAX_VALUE);
      assertTrue(storage.list(DIR).isEmpty(), storage.list(DIR).toString());
    }
  }

  /**
   * A prepared segment: the writer moves to it from a plain one as soon as it is ready, writes
   * over its zeros, and leaves the zeros after its last batch, which read as the segment's end
   * even once it is sealed; damage before them is still corruption. A clean close leaves no
   * prepared segment behind; a blank one left by a crash is skipped, then deleted like any
   * segment replay has read.
   */
  @Test
  void preparedSegmentsEndInZerosThatReadAsTheEndButDamageBeforeThemIsCorruption() throws Exception {
    FileStorage storage = new FileStorage(root);
    try (CommitLog log = CommitLog.open(storage, DIR, PREPARED)) {
      assertTrue(log.awaitPreparedSegment(30_000));
      for (int i = 0; i < 3; i++) {
        log.append("t", i, p("first-" + i)).join();
      }
    }
    for (String other : storage.list(DIR).stream().filter(n -> !n.equals("000001.log")).toList()) {
      try (ReadableFile f = storage.open(DIR + "/" + other)) {
        assertTrue(other.endsWith(".log") && LogReader.blank(f.readFully(0, (int) f.size())),
            "only a blank segment, ready but not taken, is left beside it: " + storage.list(DIR));
      }
    }
    assertEquals(PREPARED.segmentBytes(), storage.size(DIR + "/000001.log"), "written in place");
    try (CommitLog log = CommitLog.open(storage, DIR, PREPARED)) {
      log.append("t", 3, p("plain-3")).join(); // maybe to a plain segment, if none is ready yet
      assertTrue(log.awaitPreparedSegment(30_000));
      log.append("t", 4, p("prepared-4")).join();
      assertTrue(log.awaitPreparedSegment(30_000)); // and one more, blank, at the "crash" below
      // No close: the process dies here, leaving the blank segment ready.
      List<Rec> got = new ArrayList<>();
      ReplayResult r = replayResult(new FileStorage(root), got);
      assertEquals(5, got.size(), got.toString());
      assertEquals(new Rec("t", 4, "prepared-4"), got.get(4));
      assertTrue(r.clean(), r.toString());
      log.close();
    }
    byte[] first;
    try (ReadableFile f = storage.open(DIR + "/000001.log")) {
      first = f.readFully(0, (int) f.size());
    }
    int lastByte = first.length - 1;
    while (first[lastByte] == 0) {
      lastByte--;
    }
    FaultyStorage.damage(storage, DIR + "/000001.log", lastByte);
    CorruptionException e = assertThrows(CorruptionException.class, () -> replay(storage));
    assertEquals(DIR + "/000001.log", e.file());
    assertTrue(e.getMessage().contains("sealed"), e.getMessage());
  }

  @Test
  void aBlankSegmentLeftByACrashIsSkippedAndThenDeleted() throws Exception {
    FaultyStorage storage = new FaultyStorage(new FileStorage(root));
    CommitLog dead = CommitLog.open(storage, DIR, PREPARED);
    assertTrue(dead.awaitPreparedSegment(30_000));
    dead.append("t", 1, p("one")).join();
    assertTrue(dead.awaitPreparedSegment(30_000));
    storage.crash(new Random(7));
    try {
      dead.close();
    } catch (IOException expectedAfterCrash) {
      // the dead process's storage is gone
    }
    FileStorage after = new FileStorage(root);
    assertEquals(List.of("000001.log", "000002.log"), after.list(DIR));
    try (CommitLog log = CommitLog.open(after, DIR, PLAIN)) {
      List<Rec> got = new ArrayList<>();
      ReplayResult r = log.replay((t, s, b) -> got.add(new Rec(t, s, new String(b, StandardCharsets.UTF_8))));
      assertEquals(List.of(new Rec("t", 1, "one")), got);
      assertTrue(r.clean(), r.toString());
      log.deleteObsoleteSegments(t -> Long.MAX_VALUE);
      assertEquals(List.of(), after.list(DIR), "both read, neither needed");
    }
  }

  /**
   * A crash may leave a prepared segment whose first write reached the disk only in part,
   * not the part holding its batch header: it looks blank by its first bytes, and what follows
   * is dropped as a torn tail. But zeros over the first batch header of a segment whose later
   * batches are whole are corruption, not a blank segment.
   */
  @Test
  void aSegmentBlankByItsFirstBatchHeaderIsReadAsATornTailUnlessWholeBatchesFollow() throws Exception {
    FileStorage storage = new FileStorage(root);
    writeBatches(storage, 2); // segment 1, plain, sealed
    byte[] torn = new byte[4096];
    System.arraycopy(LogRecords.header(2), 0, torn, 0, CommitLogFormat.HEADER_SIZE);
    for (int i = 600; i < 900; i++) {
      torn[i] = (byte) (i * 31); // a later page of the first write, without the page holding its header
    }
    java.nio.file.Files.write(root.resolve(DIR).resolve("000002.log"), torn);
    List<Rec> got = new ArrayList<>();
    ReplayResult r = replayResult(storage, got);
    assertEquals(2, got.size());
    assertEquals(DIR + "/000002.log", r.tornSegment(), r.toString());

    Path other = root.resolve("other");
    FileStorage second = new FileStorage(other);
    writeBatches(second, 4);
    byte[] whole = java.nio.file.Files.readAllBytes(other.resolve(DIR).resolve("000001.log"));
    byte[] zeroed = Arrays.copyOf(whole, 4096);
    byte[] v2 = LogRecords.header(1);
    System.arraycopy(v2, 0, zeroed, 0, v2.length);
    Arrays.fill(zeroed, CommitLogFormat.HEADER_SIZE, CommitLogFormat.HEADER_SIZE + CommitLogFormat.BATCH_HEADER_SIZE,
        (byte) 0);
    java.nio.file.Files.write(other.resolve(DIR).resolve("000001.log"), zeroed);
    CorruptionException e = assertThrows(CorruptionException.class, () -> replay(second));
    assertTrue(e.getMessage().contains("valid batches follow"), e.getMessage());
  }

  @Test
  void appendAfterCloseFailsClearly() throws IOException {
    CommitLog log = CommitLog.open(new FileStorage(root), DIR, CommitLogOptions.defaults());
    log.close();
    CompletionException e = assertThrows(CompletionException.class, () -> log.append("t", 1, p("late")).join());
    assertTrue(e.getCause().getMessage().contains("closed"), e.getCause().getMessage());
  }

  @Test
  void optionsAreValidated() {
    assertThrows(IllegalArgumentException.class, () -> new CommitLogOptions(10, Durability.FSYNC));
    assertThrows(IllegalArgumentException.class, () -> new CommitLogOptions(1 << 20, null));
  }

  /**
   * Another process (here another storage over the same root) fences the folder while writers
   * append: every record acknowledged before is read back by a recovery that reads after the
   * fence, the writes that meet the fence fail with {@link LogFencedException}, nothing more is
   * acknowledged, and the fenced log deletes nothing.
   */
  @Test
  void aFencedLogAcknowledgesNothingMoreAndRecoveryAfterTheFenceSeesEveryAcknowledgedRecord() throws Exception {
    FileStorage storage = new FileStorage(root);
    CommitLog log = CommitLog.open(storage, DIR, CommitLogOptions.defaults());
    Map<String, Boolean> acked = new ConcurrentHashMap<>();
    AtomicLong fencedFailures = new AtomicLong();
    AtomicLong otherFailures = new AtomicLong();
    ExecutorService writers = Executors.newFixedThreadPool(4);
    List<Future<?>> running = new ArrayList<>();
    long deadline = System.nanoTime() + 20_000_000_000L; // a log that never noticed the fence stops here
    for (int w = 0; w < 4; w++) {
      int writer = w;
      running.add(writers.submit(() -> {
        for (int i = 0; System.nanoTime() < deadline; i++) {
          String payload = writer + "-" + i;
          try {
            log.append("t" + writer, i + 1, p(payload)).join();
            acked.put(payload, true);
          } catch (CompletionException e) {
            if (LogFencedException.in(e)) {
              fencedFailures.incrementAndGet();
            } else {
              otherFailures.incrementAndGet();
            }
            return null;
          }
        }
        return null;
      }));
    }
    long ackedBy = System.nanoTime() + 20_000_000_000L;
    while (acked.size() < 200) {
      assertTrue(System.nanoTime() < ackedBy, "the writers had 200 records acknowledged within 20 s, not "
          + acked.size() + " (" + fencedFailures.get() + " fenced, " + otherFailures.get() + " other failures)");
      Thread.sleep(1);
    }
    Storage recovery = new FileStorage(root);
    recovery.fence(DIR);
    assertTrue(recovery.isFenced(DIR));
    assertEquals(0, recovery.size(DIR + "/" + Storage.FENCE_MARKER), "the fence is an empty marker file");
    for (Future<?> f : running) {
      f.get();
    }
    writers.shutdown();
    List<String> read = new ArrayList<>();
    CommitLog.readFolder(recovery, DIR, (t, seq, b) -> read.add(new String(b, StandardCharsets.UTF_8)));
    assertTrue(read.containsAll(acked.keySet()), "every acknowledged record is seen by a recovery after the fence");
    assertEquals(4, fencedFailures.get(), "each writer's next write after the fence failed as fenced");
    assertEquals(0, otherFailures.get());
    assertTrue(log.isFenced());
    assertInstanceOf(LogFencedException.class, log.whenLost().join());
    CompletionException later = assertThrows(CompletionException.class, () -> log.append("t0", 1_000_000, p("x")).join());
    assertTrue(LogFencedException.in(later), later.toString());
    int files = storage.list(DIR).size();
    log.deleteObsoleteSegments(id -> Long.MAX_VALUE);
    assertEquals(files, storage.list(DIR).size(), "a fenced log deletes none of its segments");
    assertThrows(IOException.class, log::close);
  }
}
