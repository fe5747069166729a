package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sorted pieces of a dead log: each tablet reads its own records of every segment, in order,
 * from pieces sorted once; a piece is the same bytes however often it is made, the first one
 * published stays, a segment that may still grow is never sorted, and damage is reported. The
 * format is pinned by a golden piece sorted from the golden commit-log segment; after a
 * deliberate change, regenerate with
 * {@code -Dtabula.golden.write=persistence/src/test/resources/golden/recovery}.
 */
class LogPiecesTest {
  private static final String DIR = "logs/dead";

  @TempDir
  Path root;

  private static byte[] p(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Writes 300 records for tablets a, b, c, interleaved, into 4 KiB segments; returns them by tablet. */
  private static Map<String, List<String>> writeLog(Storage storage, boolean close) throws IOException {
    Map<String, List<String>> written = new java.util.TreeMap<>();
    CommitLog log = CommitLog.open(storage, DIR, new CommitLogOptions(4096, Durability.FSYNC, false));
    for (int i = 0; i < 300; i++) {
      String tablet = List.of("a", "b", "c").get(i % 3);
      String value = tablet + "-" + i + "-" + "x".repeat(40);
      log.append(tablet, i + 1, p(value)).join();
      written.computeIfAbsent(tablet, k -> new ArrayList<>()).add((i + 1) + ":" + value);
    }
    if (close) {
      log.close();
    }
    return written;
  }

  private static List<String> replay(Storage storage, String tablet) throws IOException {
    List<String> out = new ArrayList<>();
    LogPieces.replay(storage, DIR, tablet, (id, seq, payload) -> {
      assertEquals(tablet, id);
      out.add(seq + ":" + new String(payload, StandardCharsets.UTF_8));
    }, (what, e) -> {
      throw new AssertionError(what, e);
    });
    return out;
  }

  private static List<String> pieces(Storage storage) throws IOException {
    return storage.list(DIR).stream().filter(n -> n.endsWith(LogPieces.SUFFIX)).toList();
  }

  @Test
  void eachTabletReadsItsRecordsInOrderFromPiecesSortedOnce() throws IOException {
    Storage storage = new FileStorage(root);
    Map<String, List<String>> written = writeLog(storage, true);
    storage.fence(DIR);
    int segments = (int) storage.list(DIR).stream().filter(n -> n.endsWith(".log")).count();
    assertTrue(segments >= 4, "several segments: " + storage.list(DIR));
    for (String t : List.of("a", "b", "c")) {
      assertEquals(written.get(t), replay(storage, t));
    }
    assertEquals(List.of(), replay(storage, "nobody"));
    assertEquals(segments, pieces(storage).size(), "one piece per segment, made by the first reader");
    byte[] before = Files.readAllBytes(root.resolve(DIR).resolve(pieces(storage).get(0)));
    assertEquals(written.get("b"), replay(storage, "b"), "read again from the pieces");
    assertArrayEquals(before, Files.readAllBytes(root.resolve(DIR).resolve(pieces(storage).get(0))));
    assertEquals(List.of(), storage.list(DIR).stream().filter(n -> n.contains(".tmp-")).toList(), "no temporary left");
  }

  /**
   * A dead node's prepared segments: zeros after their last batches, and a blank segment it
   * had ready beyond the one it was writing. Every tablet still reads exactly its records.
   */
  @Test
  void preparedSegmentsAndABlankOneAreSortedAndRead() throws Exception {
    Storage storage = new FileStorage(root);
    Map<String, List<String>> written = new java.util.TreeMap<>();
    CommitLog log = CommitLog.open(storage, DIR, new CommitLogOptions(4096, Durability.FSYNC, true));
    for (int i = 0; i < 300; i++) {
      if (i % 50 == 0) {
        assertTrue(log.awaitPreparedSegment(30_000));
      }
      String tablet = List.of("a", "b", "c").get(i % 3);
      String value = tablet + "-" + i + "-" + "x".repeat(40);
      log.append(tablet, i + 1, p(value)).join();
      written.computeIfAbsent(tablet, k -> new ArrayList<>()).add((i + 1) + ":" + value);
    }
    assertTrue(log.awaitPreparedSegment(30_000));
    storage.fence(DIR); // the node is taken for dead, its blank segment ready
    List<String> segments = LogPieces.segments(storage, DIR);
    try (ReadableFile f = storage.open(Storage.path(DIR, segments.get(segments.size() - 1)))) {
      assertTrue(LogReader.blank(f.readFully(0, (int) f.size())), "the last file is blank: " + segments);
    }
    for (String t : List.of("a", "b", "c")) {
      assertEquals(written.get(t), replay(storage, t));
    }
    log.close();
  }

  @Test
  void aPieceIsTheSameBytesEachTimeAndTheFirstPublishedStays() throws IOException {
    Storage storage = new FileStorage(root);
    writeLog(storage, true);
    storage.fence(DIR);
    LogPieces.sort(storage, DIR + "/000001.log", DIR + "/one.sorted", false);
    LogPieces.sort(storage, DIR + "/000001.log", DIR + "/two.sorted", false);
    assertArrayEquals(Files.readAllBytes(root.resolve(DIR).resolve("one.sorted")),
        Files.readAllBytes(root.resolve(DIR).resolve("two.sorted")), "deterministic");
    // Another node published first (here: the piece of segment 2 under segment 1's name).
    LogPieces.sort(storage, DIR + "/000002.log", DIR + "/000001.sorted", false);
    byte[] first = Files.readAllBytes(root.resolve(DIR).resolve("000001.sorted"));
    LogPieces.sort(storage, DIR + "/000001.log", DIR + "/000001.sorted", false);
    assertArrayEquals(first, Files.readAllBytes(root.resolve(DIR).resolve("000001.sorted")),
        "a published piece is never replaced");
  }

  @Test
  void theLastSegmentOfALogNotFencedIsNeverSortedSoWhatItsWriterAddsIsSeen() throws IOException {
    Storage storage = new FileStorage(root);
    CommitLog log = CommitLog.open(storage, DIR, new CommitLogOptions(4096, Durability.FSYNC, false));
    for (int i = 0; i < 100; i++) {
      log.append("a", i + 1, p("v" + i + "x".repeat(60))).join();
    }
    int sealed = (int) storage.list(DIR).stream().filter(n -> n.endsWith(".log")).count() - 1;
    assertEquals(100, replay(storage, "a").size());
    assertEquals(sealed, pieces(storage).size(), "only the sealed segments are sorted");
    log.append("a", 101, p("later")).join(); // the live writer goes on in its last segment
    List<String> again = replay(storage, "a");
    assertEquals(101, again.size());
    assertEquals("101:later", again.get(100));
    log.close();
  }

  @Test
  void aDamagedPieceIsReportedAndTheSegmentIsReadWholeInstead() throws IOException {
    Storage storage = new FileStorage(root);
    Map<String, List<String>> written = writeLog(storage, true);
    storage.fence(DIR);
    replay(storage, "a");
    Path piece = root.resolve(DIR).resolve("000001.sorted");
    byte[] b = Files.readAllBytes(piece);
    b[LogPieces.HEADER_SIZE + 20] ^= 0x40; // inside the first run (tablet a)
    Files.write(piece, b);
    List<String> reports = new ArrayList<>();
    List<String> read = new ArrayList<>();
    LogPieces.replay(storage, DIR, "a", (id, seq, payload) -> read.add(seq + ":" + new String(payload,
        StandardCharsets.UTF_8)), (what, e) -> reports.add(what + ": " + e.getMessage()));
    assertEquals(written.get("a"), read, "every record, from the segment");
    assertEquals(1, reports.size(), reports.toString());
    assertTrue(reports.get(0).contains("000001.sorted"), reports.toString());
    // Damage in a segment itself is not hidden.
    Path segment = root.resolve(DIR).resolve("000002.log");
    byte[] s = Files.readAllBytes(segment);
    s[CommitLogFormat.HEADER_SIZE + 30] ^= 0x40;
    Files.write(segment, s);
    Files.delete(root.resolve(DIR).resolve("000001.sorted")); // sorted again, from its intact segment
    Files.delete(root.resolve(DIR).resolve("000002.sorted"));
    CorruptionException e = assertThrows(CorruptionException.class, () -> replay(storage, "a"));
    assertTrue(e.getMessage().contains("000002.log"), e.getMessage());
  }

  @Test
  void theGoldenPieceIsTheGoldenSegmentSortedByteForByte() throws IOException {
    Storage storage = new FileStorage(root);
    try (InputStream in = getClass().getResourceAsStream("/golden/commitlog/000001.log")) {
      Files.createDirectories(root.resolve(DIR));
      Files.write(root.resolve(DIR).resolve("000001.log"), in.readAllBytes());
    }
    LogPieces.sort(storage, DIR + "/000001.log", DIR + "/000001.sorted", true);
    byte[] sorted = Files.readAllBytes(root.resolve(DIR).resolve("000001.sorted"));
    String write = System.getProperty("tabula.golden.write");
    if (write != null && write.endsWith("recovery")) {
      Files.createDirectories(Path.of(write));
      Files.write(Path.of(write).resolve("000001.sorted"), sorted);
    }
    byte[] golden;
    try (InputStream in = getClass().getResourceAsStream("/golden/recovery/000001.sorted")) {
      assertTrue(in != null, "the golden piece is missing");
      golden = in.readAllBytes();
    }
    assertArrayEquals(golden, sorted, "the sort reproduces the golden piece");
    // Its index, as docs/formats/recovery-piece.md shows it.
    Files.write(root.resolve(DIR).resolve("golden.sorted"), golden);
    try (ReadableFile f = storage.open(DIR + "/golden.sorted")) {
      Map<String, LogPieces.Run> runs = LogPieces.index(f, "golden.sorted");
      assertEquals(List.of("t1", "t2"), List.copyOf(runs.keySet()));
      assertEquals(2, runs.get("t1").records());
      assertEquals(2, runs.get("t1").maxSequence());
      assertEquals(1, runs.get("t2").records());
      assertEquals(7, runs.get("t2").maxSequence());
      assertEquals(LogPieces.HEADER_SIZE, runs.get("t1").offset());
    }
    List<Long> seqs = new ArrayList<>();
    LogPieces.readRun(storage, DIR + "/golden.sorted", "t1", (id, seq, payload) -> seqs.add(seq));
    assertEquals(List.of(1L, 2L), seqs);
    assertFalse(storage.exists(DIR + "/FENCED"));
  }
}
