package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.InvalidMutationException;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FaultyStorage;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TabletTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"), ColumnFamily.of("g"));

  @TempDir
  Path dir;

  private final AtomicLong now = new AtomicLong(5_000_000);
  private FaultyStorage storage;
  private TabletServer server;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static RowMutation set(String row, String value) {
    return RowMutation.of(b(row), new Mutation.SetCell("f", b("q"), 1000, b(value)));
  }

  private TabletServer open() throws IOException {
    return open(TabletOptions.defaults().withMemtableBytes(4096));
  }

  private TabletServer open(TabletOptions tabletOptions) throws IOException {
    return open(tabletOptions, Durability.FSYNC);
  }

  private TabletServer open(TabletOptions tabletOptions, Durability durability) throws IOException {
    if (storage == null) {
      storage = new FaultyStorage(new FileStorage(dir));
    }
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(1 << 20,
        durability), tabletOptions);
    server = TabletServer.open(storage, o, now::get, t -> SCHEMA, (what, e) -> reported.add(what + ": " + e));
    return server;
  }

  /** What the engine reported as failed background work, in order. */
  private final java.util.Queue<String> reported = new java.util.concurrent.ConcurrentLinkedQueue<>();

  @AfterEach
  void stop() {
    if (server != null) {
      server.abandon();
    }
  }

  private static List<String> values(RowScanner s) throws IOException {
    List<String> out = new ArrayList<>();
    try (s) {
      for (Row r = s.next(); r != null; r = s.next()) {
        out.add(new String(r.key(), StandardCharsets.UTF_8) + "=" + new String(r.cells().get(0).value(),
            StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  @Test
  void writesSurviveReopenThroughLogReplayAndFlushes() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    for (int i = 0; i < 300; i++) {
      t.apply(set(String.format("row%03d", i), "v" + i)).join();
    }
    assertFalse(t.files().isEmpty(), "a 4 KiB memtable must have been flushed");
    server.abandon(); // no flush on the way down: the tail is only in the log
    Tablet again = open().tablet("t1");
    assertEquals(Optional.of(new Row(b("row123"), List.of(new Cell("f", b("q"), 1000, b("v123"))))),
        again.read(b("row123"), ReadFilter.all()));
    assertEquals(300, values(again.scan(new byte[0], new byte[0], ReadFilter.all())).size());
    assertEquals(List.of("row010=v10", "row011=v11"), values(again.scan(b("row010"), b("row012"), ReadFilter.all())));
  }

  /**
   * Flushes go on while merges run on their own executor: the file count comes back within
   * the bound once writes stop, and every row reads its last value throughout.
   */
  @Test
  void mergesKeepUpWithFlushesAndLoseNothing() throws Exception {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    Random rnd = new Random(3);
    Map<String, String> last = new HashMap<>();
    for (int i = 0; i < 3000; i++) {
      String row = String.format("row%03d", rnd.nextInt(400));
      String value = "v" + i + "-".repeat(rnd.nextInt(40));
      t.apply(set(row, value)).join();
      last.put(row, value);
      if (i % 500 == 499) {
        String probe = last.keySet().iterator().next();
        assertEquals(last.get(probe), new String(t.read(b(probe), ReadFilter.all()).orElseThrow().cells().get(0)
            .value(), StandardCharsets.UTF_8));
      }
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (t.files().get("default").size() > TabletOptions.defaults().maxFilesPerGroup()
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertTrue(t.files().get("default").size() <= TabletOptions.defaults().maxFilesPerGroup(),
        "files after the merges: " + t.files());
    Map<String, String> read = new TreeMap<>();
    for (String kv : values(t.scan(new byte[0], new byte[0], ReadFilter.all()))) {
      read.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
    }
    assertEquals(new TreeMap<>(last), read);
  }

  /**
   * A load in key order leaves its flushes side by side, unmerged while writes go on (a
   * row lies in one file only), and point reads and scans skip the files outside their
   * rows; the values all read back.
   */
  @Test
  void aLoadInKeyOrderLeavesSideBySideFilesThatReadsSkip() throws Exception {
    Tablet t = open(new TabletOptions(32 * 1024, 2, 4)).createTablet("tbl", "t1", new byte[0], new byte[0]);
    for (int i = 0; i < 2000; i++) {
      t.apply(set(String.format("row%05d", i), "v" + i + "-".repeat(40))).join();
    }
    t.freezeAndFlush().join();
    // Merges run in the background: give them time they would use if the files overlapped.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    while (t.files().get("default").size() > 2 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    int files = t.files().get("default").size();
    assertTrue(files > 2, files + " files after the load: side-by-side files past the bound of 2 should stay "
        + "unmerged");
    assertEquals("v1234" + "-".repeat(40), new String(t.read(b("row01234"), ReadFilter.all()).orElseThrow().cells()
        .get(0).value(), StandardCharsets.UTF_8));
    assertEquals(2000, values(t.scan(new byte[0], new byte[0], ReadFilter.all())).size());
    assertEquals(List.of("row00999=v999" + "-".repeat(40), "row01000=v1000" + "-".repeat(40)),
        values(t.scan(b("row00999"), b("row01001"), ReadFilter.all())));
  }

  @Test
  void aScanSeesTheSnapshotItStartedWith() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    for (int i = 0; i < 20; i++) {
      t.apply(set(String.format("row%03d", i), "old")).join();
    }
    try (RowScanner s = t.scan(new byte[0], new byte[0], ReadFilter.all())) {
      for (int i = 0; i < 200; i++) {
        t.apply(set(String.format("row%03d", i), "new")).join();
      }
      t.freezeAndFlush().join();
      t.majorCompact().join();
      int n = 0;
      for (Row r = s.next(); r != null; r = s.next()) {
        assertEquals("old", new String(r.cells().get(0).value(), StandardCharsets.UTF_8));
        n++;
      }
      assertEquals(20, n);
    }
    assertEquals(200, values(t.scan(new byte[0], new byte[0], ReadFilter.all())).size());
  }

  /** Writers, readers, flushes and compactions at once: a row mutation is seen whole or not at all. */
  @Test
  void concurrentWritersAndReadersSeeWholeRowMutations() throws Exception {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    int writers = 4;
    int perWriter = 300;
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(writers + 2);
    try {
      List<java.util.concurrent.Future<?>> jobs = new ArrayList<>();
      java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
      for (int w = 0; w < writers; w++) {
        int id = w;
        jobs.add(pool.submit(() -> {
          List<java.util.concurrent.CompletableFuture<Void>> inFlight = new ArrayList<>();
          for (int i = 0; i < perWriter; i++) {
            String v = id + "-" + i;
            inFlight.add(t.apply(RowMutation.of(b(String.format("row%02d", i % 50)),
                new Mutation.SetCell("f", b("x"), 1000, b(v)), new Mutation.SetCell("g", b("y"), 1000, b(v)))));
            if (inFlight.size() == 20) {
              inFlight.forEach(java.util.concurrent.CompletableFuture::join);
              inFlight.clear();
            }
          }
          inFlight.forEach(java.util.concurrent.CompletableFuture::join);
          return null;
        }));
      }
      java.util.concurrent.Future<?> reader = pool.submit(() -> {
        while (!done.get()) {
          try (RowScanner s = t.scan(new byte[0], new byte[0], ReadFilter.all())) {
            for (Row r = s.next(); r != null; r = s.next()) {
              assertEquals(2, r.cells().size(), "both cells of a row mutation or neither: " + r);
              assertEquals(new String(r.cells().get(0).value(), StandardCharsets.UTF_8),
                  new String(r.cells().get(1).value(), StandardCharsets.UTF_8), "one row mutation, not two: " + r);
            }
          }
        }
        return null;
      });
      java.util.concurrent.Future<?> compactor = pool.submit(() -> {
        while (!done.get()) {
          t.majorCompact().join();
        }
        return null;
      });
      for (java.util.concurrent.Future<?> j : jobs) {
        j.get();
      }
      done.set(true);
      reader.get();
      compactor.get();
    } finally {
      pool.shutdownNow();
    }
    assertEquals(50, values(t.scan(new byte[0], new byte[0], ReadFilter.all())).size());
  }

  @Test
  void serverTimestampsAreMilliseconds() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    now.set(7_123_456);
    t.apply(RowMutation.of(b("r"), new Mutation.SetCell("f", b("q"), Mutation.SERVER_TIME, b("v")))).join();
    assertEquals(7_123_000, t.read(b("r"), ReadFilter.all()).orElseThrow().cells().get(0).timestamp());
  }

  @Test
  void unknownFamilyAndForeignRowAreRefused() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", b("m"), b("p"));
    InvalidMutationException e = assertThrows(InvalidMutationException.class,
        () -> t.apply(RowMutation.of(b("n"), new Mutation.DeleteFromFamily("nope"))));
    assertEquals("mutations[0].family_name", e.field());
    assertThrows(TabletUnavailableException.class, () -> t.apply(set("a", "x")));
    assertThrows(TabletUnavailableException.class, () -> t.read(b("z"), ReadFilter.all()));
  }

  @Test
  void rowSamplesGrowInRowOrderAndMidRowCutsTheDataInHalf() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    assertTrue(t.midRow().isEmpty(), "an empty tablet has no split point");
    byte[] big = new byte[200];
    Random random = new Random(42);
    for (int i = 0; i < 400; i++) {
      random.nextBytes(big);
      t.apply(RowMutation.of(b(String.format("row%03d", i)), new Mutation.SetCell("f", b("q"), 1000, big))).join();
    }
    t.freezeAndFlush().join();
    List<Tablet.RowSample> samples = t.rowSamples();
    assertTrue(samples.size() > 4, "several blocks sampled: " + samples.size());
    for (int i = 1; i < samples.size(); i++) {
      assertTrue(ByteArrays.compare(samples.get(i - 1).row(), samples.get(i).row()) < 0);
      assertTrue(samples.get(i - 1).offsetBytes() < samples.get(i).offsetBytes());
    }
    String mid = new String(t.midRow().orElseThrow(), StandardCharsets.UTF_8);
    // Samples are as coarse as the blocks (tens of rows here): the cut is the sample nearest the middle.
    long half = samples.get(samples.size() - 1).offsetBytes() / 2;
    long best = samples.stream().mapToLong(x -> Math.abs(x.offsetBytes() - half)).min().orElseThrow();
    Tablet.RowSample chosen = samples.stream().filter(x -> new String(x.row(), StandardCharsets.UTF_8).equals(mid))
        .findFirst().orElseThrow();
    assertEquals(best, Math.abs(chosen.offsetBytes() - half), "split point nearest the middle: " + mid);
    List<Tablet> kids = server.split("t1", b(mid), "t2", "t3");
    for (Tablet.RowSample s : kids.get(0).rowSamples()) {
      assertTrue(ByteArrays.compare(s.row(), b(mid)) < 0, "a child samples only its own rows");
    }
  }

  @Test
  void splitSharesFilesAndBothChildrenServe() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    for (int i = 0; i < 100; i++) {
      t.apply(set(String.format("row%03d", i), "v" + i)).join();
    }
    t.apply(set("row099", "in the memtable at the split")).join();
    List<Tablet> kids = server.split("t1", b("row050"), "t2", "t3");
    assertEquals(50, values(kids.get(0).scan(new byte[0], new byte[0], ReadFilter.all())).size());
    assertEquals(50, values(kids.get(1).scan(new byte[0], new byte[0], ReadFilter.all())).size());
    List<String> parentFiles = kids.get(0).files().get("default");
    assertEquals(parentFiles, kids.get(1).files().get("default"));
    assertEquals(List.of("row099=in the memtable at the split"),
        values(kids.get(1).scan(b("row099"), new byte[0], ReadFilter.all())));
    assertThrows(TabletUnavailableException.class, () -> t.apply(set("row001", "late")));
    kids.get(1).apply(set("row077", "new")).join();
    kids.get(1).majorCompact().join();
    for (String f : parentFiles) {
      assertTrue(storage.exists(f), "a shared file survives the sibling's compaction: " + f);
    }
    server.close();
    server = null;
    TabletServer again = open();
    assertEquals(List.of("row077=new"), values(again.tablet("t3").scan(b("row077"), b("row078"), ReadFilter.all())));
    assertEquals(null, again.tablet("t1"));
  }

  @Test
  void majorCompactionDropsDeletesAndDeletedData() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(set("a", "1")).join();
    t.freezeAndFlush().join();
    t.apply(RowMutation.of(b("a"), Mutation.DeleteFromRow.INSTANCE)).join();
    t.freezeAndFlush().join();
    assertEquals(2, t.files().get("default").size());
    t.majorCompact().join();
    assertEquals(List.of(), t.files().get("default"), "nothing survives: no file is written");
    assertEquals(Optional.empty(), t.read(b("a"), ReadFilter.all()));
  }

  @Test
  void fullDiskFailsTheWriteAndTheTabletStaysConsistent() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(set("a", "before")).join();
    storage.setSpaceLeft(10);
    CompletionException e = assertThrows(CompletionException.class, () -> t.apply(set("b", "lost")).join());
    assertInstanceOf(IOException.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains("No space left"), e.getCause().getMessage());
    assertEquals(Optional.empty(), t.read(b("b"), ReadFilter.all()), "a failed write is not applied");
    storage.unlimitedSpace();
    t.apply(set("c", "after")).join();
    assertEquals(List.of("a=before", "c=after"), values(t.scan(new byte[0], new byte[0], ReadFilter.all())));
    server.abandon();
    Tablet again = open().tablet("t1");
    assertEquals(List.of("a=before", "c=after"), values(again.scan(new byte[0], new byte[0], ReadFilter.all())));
  }

  @Test
  void aFailedFsyncFailsTheWriteAndEveryLaterOneAndARecoveryKeepsWhatWasAcknowledged() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(set("a", "before")).join();
    storage.failSyncs(true);
    CompletionException e = assertThrows(CompletionException.class, () -> t.apply(set("b", "unsure")).join());
    assertTrue(e.getCause().getMessage().contains("fsync"), e.getCause().getMessage());
    assertTrue(server.whenLogLost().isDone(), "the server learns that its log is lost");
    storage.failSyncs(false);
    assertThrows(CompletionException.class, () -> t.apply(set("c", "refused")).join());
    server.abandon();
    Tablet again = open().tablet("t1");
    List<String> read = values(again.scan(new byte[0], new byte[0], ReadFilter.all()));
    assertTrue(read.equals(List.of("a=before")) || read.equals(List.of("a=before", "b=unsure")), read.toString());
  }

  @Test
  void aTabletWhoseCloseFailedKeepsItsLogSegmentsForItsNextOwner() throws Exception {
    storage = new FaultyStorage(new FileStorage(dir));
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(4096,
        Durability.FSYNC), TabletOptions.defaults());
    server = TabletServer.open(storage, o, now::get, t -> SCHEMA, (what, e) -> reported.add(what + ": " + e));
    Tablet t1 = server.createTablet("tbl", "t1", new byte[0], b("m"));
    Tablet t2 = server.createTablet("tbl", "t2", b("m"), new byte[0]);
    for (int i = 0; i < 40; i++) {
      t1.apply(set(String.format("a%03d", i), "x".repeat(200))).join(); // several 4 KiB segments of t1 alone
    }
    storage.setSpaceLeft(0);
    assertThrows(IOException.class, () -> server.closeTablet("t1"), "the full disk fails t1's flush");
    storage.unlimitedSpace();
    for (int i = 0; i < 40; i++) {
      t2.apply(set(String.format("z%03d", i), "y".repeat(200))).join();
    }
    t2.freezeAndFlush().join(); // a flush deletes the segments no open tablet needs
    Thread.sleep(200);
    server.abandon();

    // t1's next owner replays it from n1's log: every acknowledged write of t1 is there.
    TabletServer.Options o2 = new TabletServer.Options("n2", 1 << 20, 1, new CommitLogOptions(4096,
        Durability.FSYNC), TabletOptions.defaults());
    server = TabletServer.startOnDemand(new FileStorage(dir), o2, now::get, t -> SCHEMA, (what, e) -> { });
    Tablet again = server.openTablet("tbl", "t1", new byte[0], b("m"), List.of("n1")).tablet();
    assertEquals(40, values(again.scan(new byte[0], new byte[0], ReadFilter.all())).size());
  }

  @Test
  void aTabletWhoseCloseFailedReopensOnTheSameNodeFromItsOwnLog() throws Exception {
    storage = new FaultyStorage(new FileStorage(dir));
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(4096,
        Durability.FSYNC), TabletOptions.defaults());
    server = TabletServer.startOnDemand(storage, o, now::get, t -> SCHEMA, (what, e) -> reported.add(what + ": " + e));
    Tablet t1 = server.openTablet("tbl", "t1", new byte[0], b("m"), List.of()).tablet();
    for (int i = 0; i < 40; i++) {
      t1.apply(set(String.format("a%03d", i), "x".repeat(200))).join();
    }
    storage.setSpaceLeft(0);
    assertThrows(IOException.class, () -> server.closeTablet("t1"));
    storage.unlimitedSpace();
    Tablet again = server.openTablet("tbl", "t1", new byte[0], b("m"), List.of(server.logName())).tablet();
    assertEquals(40, values(again.scan(new byte[0], new byte[0], ReadFilter.all())).size(),
        "its writes since its last flush, replayed from this node's own log");
    again.apply(set("b000", "later")).join();
    server.closeTablet("t1"); // a clean close now
    assertTrue(storage.list("tables/tbl/t1").stream().anyMatch(f -> f.endsWith(".sst")));
  }

  /**
   * A tablet given up without a flush (the master refused its opening after its actor started
   * again over a tablet still open here) keeps the segments of this node's log that hold its
   * writes since its last flush, as a failed close does: a flush of another tablet deletes
   * none of them, and its next opening here replays them. Discarding it instead let them go.
   */
  @Test
  void aTabletGivenUpWithoutAFlushKeepsItsLogSegments() throws Exception {
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(4096,
        Durability.FSYNC), TabletOptions.defaults());
    server = TabletServer.startOnDemand(new FileStorage(dir), o, now::get, t -> SCHEMA, (what, e) -> { });
    Tablet t1 = server.openTablet("tbl", "t1", new byte[0], b("m"), List.of()).tablet();
    Tablet t2 = server.openTablet("tbl", "t2", b("m"), new byte[0], List.of()).tablet();
    for (int i = 0; i < 40; i++) {
      t1.apply(set(String.format("a%03d", i), "x".repeat(200))).join(); // several 4 KiB segments of t1 alone
    }
    server.giveUpTablet("t1");
    for (int i = 0; i < 40; i++) {
      t2.apply(set(String.format("z%03d", i), "y".repeat(200))).join();
    }
    t2.freezeAndFlush().join(); // a flush deletes the segments no open tablet needs
    Thread.sleep(200);
    Tablet again = server.openTablet("tbl", "t1", new byte[0], b("m"), List.of(server.logName())).tablet();
    assertEquals(40, values(again.scan(new byte[0], new byte[0], ReadFilter.all())).size(),
        "its writes since its last flush, replayed from this node's own log");
  }

  /**
   * The logs to replay are named as folders under {@code logs/}: a path there ("logs/n1") names
   * a folder that does not exist, so the tablet would open without the writes of the log meant.
   */
  @Test
  void openTabletRefusesALogNameThatIsAPath() throws IOException {
    server = TabletServer.startOnDemand(new FileStorage(dir), TabletServer.Options.defaults("n2"), now::get,
        t -> SCHEMA, (what, e) -> { });
    InvalidLogNameException e = assertThrows(InvalidLogNameException.class,
        () -> server.openTablet("tbl", "t1", new byte[0], new byte[0], List.of("n1", "logs/n1")));
    assertEquals("logs", e.parameter());
    assertEquals("logs/n1", e.name());
    assertEquals(null, server.tablet("t1"), "nothing opened");
    assertFalse(ManifestCodec.exists(server.env().storage(), Tablet.dirOf("tbl", "t1")), "nothing created");
  }

  @Test
  void aFailedBackgroundFlushAndAFileLeftBehindAreReported() throws Exception {
    // The log does not sync, so writes succeed while every SSTable's sync fails.
    Tablet t = open(TabletOptions.defaults().withMemtableBytes(4096), Durability.OS_BUFFERED)
        .createTablet("tbl", "t1", new byte[0], new byte[0]);
    storage.failSyncs(true);
    // (The commit log's segment preparer also reports its failed syncs; the flush's report is awaited.)
    java.util.function.BooleanSupplier flushReported = () -> reported.stream().anyMatch(r -> r.contains("of tablet t1"));
    for (int i = 0; !flushReported.getAsBoolean() && i < 2000; i++) {
      try {
        t.apply(set(String.format("row%05d", i), "x".repeat(100))).join();
      } catch (TabletUnavailableException flushesFail) {
        // The backlog filled up behind the failed flush before its report was read: writes are
        // refused now, which is right; the report is awaited below.
        break;
      }
    }
    long until = System.nanoTime() + 10_000_000_000L;
    while (!flushReported.getAsBoolean() && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertTrue(reported.stream().anyMatch(r -> r.contains("of tablet t1") && r.contains("fsync")),
        "a flush that failed with nobody waiting is reported: " + reported);
    storage.failSyncs(false);
    reported.clear();

    t.freezeAndFlush().join();
    assertTrue(t.files().get("default").size() >= 1);
    t.apply(set("more", "y")).join();
    t.freezeAndFlush().join();
    storage.failDeletes(true);
    t.majorCompact().join();
    storage.failDeletes(false);
    assertTrue(reported.stream().anyMatch(r -> r.contains("closing or deleting SSTable tables/tbl/t1/")
        && r.contains("injected failure to delete")), "a file left behind is reported: " + reported);
  }

  @Test
  void aFlippedByteInAnSSTableIsReportedNotReturned() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    for (int i = 0; i < 50; i++) {
      t.apply(set(String.format("row%03d", i), "value-" + i)).join();
    }
    t.freezeAndFlush().join();
    String file = t.files().get("default").get(0);
    server.close();
    server = null;
    FaultyStorage.damage(storage, file, 30);
    TabletServer again = open();
    CorruptionException c = assertThrows(CorruptionException.class,
        () -> values(again.tablet("t1").scan(new byte[0], new byte[0], ReadFilter.all())));
    assertEquals(file, c.file());
  }
}
