package io.tabula.persistence.journal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.journal.JournalRecord.DeleteEvents;
import io.tabula.persistence.journal.JournalRecord.DeleteSnapshots;
import io.tabula.persistence.journal.JournalRecord.Event;
import io.tabula.persistence.journal.JournalRecord.Snapshot;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's journal on real files: history across epochs, the fence an epoch puts on the
 * ones before it (an old master's appends fail, and what it wrote after the newer master read
 * is never part of the history), torn tails, deletions that let segments go, and the golden
 * files that pin the format (docs/formats/master-journal.md). To rewrite the golden files after
 * a deliberate format change, run this test with
 * {@code -Dtabula.golden.write=persistence/src/test/resources/golden/master-journal}.
 */
class MasterJournalTest {
  private static final String DIR = "master/journal";
  private static final String ID = "tabula-master";

  @TempDir
  Path root;

  private static Event event(long seq) {
    return new Event(ID, seq, "writer-1", 1_000 + seq, "", 42, "E", ("event " + seq).getBytes(UTF_8));
  }

  private static Snapshot snapshot(long seq) {
    return new Snapshot(ID, seq, 5_000 + seq, 42, "S", ("state at " + seq).getBytes(UTF_8));
  }

  private static List<Long> seqs(MasterJournal j) {
    return j.events(ID, 1, Long.MAX_VALUE, Long.MAX_VALUE).stream().map(Event::sequenceNr).toList();
  }

  @Test
  void eachOpenIsANewEpochThatReadsEverythingBefore() throws IOException {
    Storage storage = new FileStorage(root);
    try (MasterJournal first = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(1, first.epoch());
      assertEquals(0, first.highestSequenceNr(ID));
      first.append(List.of(event(1), event(2)));
      first.append(List.of(event(3)));
    }
    try (MasterJournal second = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(2, second.epoch());
      assertEquals(List.of(1L, 2L, 3L), seqs(second));
      assertEquals(event(2), second.events(ID, 2, 2, 10).get(0), "every field comes back");
      assertEquals(3, second.highestSequenceNr(ID));
      second.append(List.of(event(4), snapshot(4)));
    }
    try (MasterJournal third = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(List.of(1L, 2L, 3L, 4L), seqs(third));
      assertEquals(List.of(3L, 4L), third.events(ID, 3, 10, 10).stream().map(Event::sequenceNr).toList());
      assertEquals(List.of(3L), third.events(ID, 3, 10, 1).stream().map(Event::sequenceNr).toList());
      assertEquals(snapshot(4), third.latestSnapshot(ID, 0, Long.MAX_VALUE, 0, Long.MAX_VALUE).orElseThrow());
      assertTrue(third.latestSnapshot(ID, 0, 3, 0, Long.MAX_VALUE).isEmpty());
    }
  }

  @Test
  void aNewerEpochFencesTheOlderWhoseLaterAppendsFailAndAreNeverRead() throws IOException {
    Storage storage = new FileStorage(root);
    MasterJournal old = MasterJournal.open(storage, DIR, 1 << 20);
    old.append(List.of(event(1), event(2)));
    try (MasterJournal taker = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(List.of(1L, 2L), seqs(taker), "everything the old master acknowledged");
      // The old master resumes: its next append reaches the file but is refused, and stays refused.
      assertThrows(JournalFencedException.class, () -> old.append(List.of(event(3))));
      assertThrows(JournalFencedException.class, () -> old.append(List.of(event(4))));
      taker.append(List.of(new Event(ID, 3, "writer-2", 9, "", 42, "E", "the taker's 3".getBytes(UTF_8))));
    }
    old.close();
    try (MasterJournal next = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(List.of(1L, 2L, 3L), seqs(next));
      assertEquals("writer-2", next.events(ID, 3, 3, 1).get(0).writerUuid(),
          "event 3 is the taker's; the fenced master's 3, written after the taker read, is not in the history");
    }
  }

  @Test
  void aTornTailEndsTheHistoryAtTheLastWholeRecord() throws IOException {
    Storage storage = new FileStorage(root);
    try (MasterJournal first = MasterJournal.open(storage, DIR, 1 << 20)) {
      first.append(List.of(event(1), event(2)));
    }
    Path segment = root.resolve(DIR).resolve("0000000001").resolve("000001.log");
    Files.write(segment, new byte[] {0, 0, 0, 40, 1, 2, 3}, StandardOpenOption.APPEND);
    try (MasterJournal second = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(List.of(1L, 2L), seqs(second));
      second.append(List.of(event(3)));
    }
    try (MasterJournal third = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(List.of(1L, 2L, 3L), seqs(third), "the horizon keeps the first epoch's segment to its whole records");
    }
  }

  @Test
  void damageWithinWhatAHorizonListsIsCorruptionNotAShorterHistory() throws IOException {
    Storage storage = new FileStorage(root);
    try (MasterJournal first = MasterJournal.open(storage, DIR, 1 << 20)) {
      first.append(List.of(event(1), event(2), event(3)));
    }
    MasterJournal.open(storage, DIR, 1 << 20).close(); // epoch 2's horizon lists epoch 1's segment
    Path segment = root.resolve(DIR).resolve("0000000001").resolve("000001.log");
    byte[] b = Files.readAllBytes(segment);
    b[MasterJournal.SEGMENT_HEADER + 12] ^= 1;
    Files.write(segment, b);
    assertThrows(CorruptionException.class, () -> MasterJournal.open(storage, DIR, 1 << 20));
  }

  @Test
  void segmentsWhoseEveryRecordIsDeletedGoAtTheNextOpen() throws IOException {
    Storage storage = new FileStorage(root);
    try (MasterJournal first = MasterJournal.open(storage, DIR, 100)) {
      for (long s = 1; s <= 10; s++) {
        first.append(List.of(event(s)));
      }
      first.append(List.of(snapshot(8)));
      first.append(List.of(new DeleteEvents(ID, 8)));
    }
    int before = storage.list(DIR + "/0000000001").size();
    try (MasterJournal second = MasterJournal.open(storage, DIR, 100)) {
      assertEquals(List.of(9L, 10L), seqs(second));
      assertEquals(10, second.highestSequenceNr(ID));
      assertEquals(8, second.latestSnapshot(ID, 0, Long.MAX_VALUE, 0, Long.MAX_VALUE).orElseThrow().sequenceNr());
    }
    int after = storage.list(DIR + "/0000000001").size();
    assertTrue(after < before, "segments of deleted events were removed: " + before + " files, then " + after);
    try (MasterJournal third = MasterJournal.open(storage, DIR, 100)) {
      assertEquals(List.of(9L, 10L), seqs(third));
      assertEquals(10, third.highestSequenceNr(ID), "the highest number outlives its segment");
      third.append(List.of(new DeleteEvents(ID, 10)));
    }
    try (MasterJournal fourth = MasterJournal.open(storage, DIR, 100)) {
      assertEquals(List.of(), seqs(fourth));
      assertEquals(10, fourth.highestSequenceNr(ID), "all deleted: the next event is still 11");
      assertEquals(1, storage.list(DIR + "/0000000001").stream().filter(n -> n.endsWith(".log")).count(),
          "of the first epoch, only the segment with the live snapshot is left");
      assertFalse(storage.exists(DIR + "/0000000002"), "the second epoch, which wrote nothing, is gone");
    }
  }

  @Test
  void aSnapshotDeletionStaysWhileTheSnapshotItDeletedIsKept() throws IOException {
    Storage storage = new FileStorage(root);
    try (MasterJournal first = MasterJournal.open(storage, DIR, 1 << 20)) {
      first.append(List.of(event(1), snapshot(1), event(2)));
    }
    try (MasterJournal second = MasterJournal.open(storage, DIR, 100)) {
      second.append(List.of(new DeleteSnapshots(ID, 0, 1, 0, Long.MAX_VALUE)));
      second.append(List.of(event(3)));
      second.append(List.of(event(4)));
    }
    for (int i = 0; i < 2; i++) {
      try (MasterJournal j = MasterJournal.open(storage, DIR, 100)) {
        assertTrue(j.latestSnapshot(ID, 0, Long.MAX_VALUE, 0, Long.MAX_VALUE).isEmpty(), "the snapshot stays deleted");
        assertEquals(List.of(1L, 2L, 3L, 4L), seqs(j));
      }
    }
  }

  @Test
  void theGoldenJournalIsWhatTheWriterWritesAndReadsBack() throws IOException {
    Storage storage = new FileStorage(root);
    try (MasterJournal first = MasterJournal.open(storage, DIR, 1 << 20)) {
      first.append(List.of(event(1), event(2)));
      first.append(List.of(snapshot(2), new DeleteSnapshots(ID, 0, 1, 0, 7), new DeleteEvents(ID, 1)));
    }
    MasterJournal.open(storage, DIR, 1 << 20).close();
    List<String> files = List.of("0000000001/EPOCH", "0000000001/HORIZON", "0000000001/000001.log",
        "0000000001/FENCED", "0000000002/EPOCH", "0000000002/HORIZON");
    String write = System.getProperty("tabula.golden.write");
    for (String f : files) {
      if (write != null) {
        Path out = Path.of(write).resolve(f);
        Files.createDirectories(out.getParent());
        Files.write(out, Files.readAllBytes(root.resolve(DIR).resolve(f)));
      }
    }
    for (String f : files) {
      byte[] written = Files.readAllBytes(root.resolve(DIR).resolve(f));
      try (InputStream in = getClass().getResourceAsStream("/golden/master-journal/" + f)) {
        assertTrue(in != null, "golden file " + f + " is missing");
        assertArrayEquals(in.readAllBytes(), written, "the writer reproduces golden " + f);
      }
    }
    // Read the golden files themselves, as a later version of Tabula would find them.
    Path golden = root.resolve("golden");
    for (String f : files) {
      try (InputStream in = getClass().getResourceAsStream("/golden/master-journal/" + f)) {
        Path to = golden.resolve(DIR).resolve(f);
        Files.createDirectories(to.getParent());
        Files.write(to, in.readAllBytes());
      }
    }
    try (MasterJournal j = MasterJournal.open(new FileStorage(golden), DIR, 1 << 20)) {
      assertEquals(3, j.epoch());
      assertEquals(List.of(event(2)), j.events(ID, 1, Long.MAX_VALUE, Long.MAX_VALUE));
      assertEquals(snapshot(2), j.latestSnapshot(ID, 0, Long.MAX_VALUE, 0, Long.MAX_VALUE).orElseThrow());
      assertEquals(2, j.highestSequenceNr(ID));
    }
  }

  @Test
  void twoOpenersAtOnceGetDifferentEpochsAndTheLaterWins() throws Exception {
    Storage storage = new FileStorage(root);
    try (MasterJournal seed = MasterJournal.open(storage, DIR, 1 << 20)) {
      seed.append(LongStream.rangeClosed(1, 50).mapToObj(MasterJournalTest::event).map(e -> (JournalRecord) e)
          .toList());
    }
    MasterJournal[] opened = new MasterJournal[2];
    Thread[] threads = new Thread[2];
    for (int i = 0; i < 2; i++) {
      int k = i;
      threads[i] = new Thread(() -> {
        try {
          opened[k] = MasterJournal.open(storage, DIR, 1 << 20);
        } catch (IOException e) {
          // Fenced while opening by the other: a lost race, as the class comment allows.
        }
      });
      threads[i].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    int succeeded = 0;
    MasterJournal later = null;
    for (MasterJournal j : opened) {
      if (j != null) {
        succeeded++;
        assertEquals(50, seqs(j).size());
        if (later == null || j.epoch() > later.epoch()) {
          later = j;
        }
      }
    }
    assertTrue(succeeded >= 1, "at least one opener got the journal");
    later.append(List.of(event(51)));
    for (MasterJournal j : opened) {
      if (j != null && j != later) {
        MasterJournal earlier = j;
        assertThrows(JournalFencedException.class, () -> earlier.append(List.of(event(51))));
      }
    }
    for (MasterJournal j : opened) {
      if (j != null) {
        j.close();
      }
    }
  }

  /**
   * A master that runs long renews its epoch ({@link MasterJournal#successor}): the successor
   * holds the same history, the old epoch is fenced, and the segments whose every record is
   * dead are deleted now rather than at the next master's start; a later master reads the same.
   */
  @Test
  void aSuccessorEpochKeepsTheHistoryAndDeletesTheDeadSegments() throws IOException {
    Storage storage = new FileStorage(root);
    MasterJournal first = MasterJournal.open(storage, DIR, 256);
    for (long i = 1; i <= 40; i++) {
      first.append(List.of(event(i)));
      if (i % 10 == 0) {
        first.append(List.of(snapshot(i), new DeleteSnapshots(ID, 0, i - 1, 0, Long.MAX_VALUE), new DeleteEvents(ID, i)));
      }
    }
    first.append(List.of(event(41), event(42)));
    long before = segmentFiles();
    MasterJournal next = first.successor();
    assertEquals(first.epoch() + 1, next.epoch());
    assertEquals(List.of(41L, 42L), seqs(next));
    assertEquals(42, next.highestSequenceNr(ID));
    assertEquals(40, next.latestSnapshot(ID, 0, Long.MAX_VALUE, 0, Long.MAX_VALUE).orElseThrow().sequenceNr());
    assertTrue(first.isFenced(), "the renewed epoch is fenced");
    IOException closed = assertThrows(IOException.class, () -> first.append(List.of(event(43))));
    assertFalse(closed instanceof JournalFencedException, "the renewed epoch is closed: " + closed);
    long after = segmentFiles();
    assertTrue(after < before / 2, "dead segments are deleted at the renewal: " + before + " before, " + after + " after");
    next.append(List.of(event(43)));
    next.close();
    try (MasterJournal later = MasterJournal.open(storage, DIR, 256)) {
      assertEquals(List.of(41L, 42L, 43L), seqs(later));
      assertEquals(40, later.latestSnapshot(ID, 0, Long.MAX_VALUE, 0, Long.MAX_VALUE).orElseThrow().sequenceNr());
    }
  }

  /**
   * A master whose epoch a newer master fenced (it lost its lease and has not noticed) cannot
   * renew it: nothing of the newer master's is fenced, also when the newer master claims its
   * epoch between the renewal's look and its claim.
   */
  @Test
  void aStaleMasterCannotRenewItsEpochOverANewerOne() throws IOException {
    Storage storage = new FileStorage(root);
    MasterJournal old = MasterJournal.open(storage, DIR, 1 << 20);
    old.append(List.of(event(1)));
    try (MasterJournal newer = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertThrows(JournalFencedException.class, old::successor);
      // The renewal's claim comes after the newer master's: it must not fence it.
      assertThrows(JournalFencedException.class, () -> MasterJournal.open(storage, DIR, 1 << 20, old.epoch() + 1,
          old.epoch()));
      assertFalse(newer.isFenced(), "the newer master's epoch is not fenced");
      newer.append(List.of(event(2)));
      // The refused renewals left no claim above the newer master's epoch: it renews its own.
      try (MasterJournal renewed = newer.successor()) {
        renewed.append(List.of(event(3)));
      }
    }
    try (MasterJournal later = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(List.of(1L, 2L, 3L), seqs(later));
    }
  }

  private long segmentFiles() throws IOException {
    try (java.util.stream.Stream<Path> files = Files.walk(root.resolve(DIR))) {
      return files.filter(f -> f.toString().endsWith(".log")).count();
    }
  }

  /**
   * A master that ran long wrote many snapshots, each the size of the whole directory and each
   * deleting the one before (as its retention does), and a journal holds them all until the next
   * master opens it. That open holds the live history only, not every record it reads: a JVM
   * whose heap is a third of the journal opens it (it ran out of memory when an open kept every
   * segment's records until it had read them all).
   */
  @Test
  void anOpenHoldsTheLiveHistoryNotEveryRecordItReads() throws Exception {
    int snapshots = 24;
    int bytes = 8 << 20;
    Storage storage = new FileStorage(root);
    try (MasterJournal writer = MasterJournal.open(storage, DIR, 1 << 20)) {
      for (int i = 1; i <= snapshots; i++) {
        byte[] state = new byte[bytes];
        java.util.Arrays.fill(state, (byte) i);
        writer.append(List.of(event(i), new Snapshot(ID, i, 5_000 + i, 42, "S", state),
            new DeleteSnapshots(ID, 0, i - 1, 0, Long.MAX_VALUE), new DeleteEvents(ID, i)));
      }
    }
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-Xmx64m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        OpenJournal.class.getName(), root.toString(), DIR).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), UTF_8);
    assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "the open finishes");
    assertEquals(0, p.exitValue(), "a 64 MiB JVM opens a journal of " + snapshots + " snapshots of " + (bytes >> 20)
        + " MiB each: " + out);
    assertTrue(out.contains("latest snapshot " + snapshots + ", " + bytes + " bytes"), out);
  }

  /** Opens a journal ({@code args}: a storage root and the journal's folder) and prints its latest snapshot. */
  static final class OpenJournal {
    public static void main(String[] args) throws IOException {
      try (MasterJournal j = MasterJournal.open(new FileStorage(Path.of(args[0])), args[1], 1 << 20)) {
        Snapshot s = j.latestSnapshot(ID, 0, Long.MAX_VALUE, 0, Long.MAX_VALUE).orElseThrow();
        System.out.println("latest snapshot " + s.sequenceNr() + ", " + s.payload().length + " bytes");
      }
    }
  }

  /** A segment read before its header was whole is listed with length 0; later opens read nothing of it. */
  @Test
  void aSegmentReadBeforeItsHeaderWasWholeStaysEmptyInTheHistory() throws IOException {
    Storage storage = new FileStorage(root);
    MasterJournal old = MasterJournal.open(storage, DIR, 1 << 20);
    old.append(List.of(event(1)));
    // The old master has just made its next segment, and freezes before writing its header.
    Path made = root.resolve(DIR).resolve("0000000001").resolve("000002.log");
    Files.write(made, new byte[0]);
    try (MasterJournal taker = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(List.of(1L), seqs(taker));
    }
    // It resumes: header and a record land in that segment (its append is refused: fenced).
    Files.write(made, MasterJournal.segmentHeader(1, 2), StandardOpenOption.APPEND);
    io.tabula.persistence.encoding.ByteSink late = new io.tabula.persistence.encoding.ByteSink(64);
    MasterJournal.frame(event(2), late);
    Files.write(made, late.toArray(), StandardOpenOption.APPEND);
    old.close();
    for (int i = 0; i < 2; i++) {
      try (MasterJournal next = MasterJournal.open(storage, DIR, 1 << 20)) {
        assertEquals(List.of(1L), seqs(next), "what the taker read, and nothing written after");
      }
    }
  }

  /**
   * A claimant that listed the epochs, paused, and then got a number a newer master had freed
   * (it removed that folder, which held no segment) is stale: its open fails, fenced.
   */
  @Test
  void aClaimOfANumberFreedBelowTheNewestEpochIsFenced() throws IOException {
    Storage storage = new FileStorage(root);
    try (MasterJournal first = MasterJournal.open(storage, DIR, 1 << 20)) {
      first.append(List.of(event(1)));
    }
    MasterJournal.open(storage, DIR, 1 << 20).close(); // epoch 2, writes nothing
    try (MasterJournal third = MasterJournal.open(storage, DIR, 1 << 20)) { // epoch 3 removes folder 2
      third.append(List.of(event(2)));
      assertFalse(storage.exists(DIR + "/0000000002"));
      // The paused claimant listed the epochs before epoch 2 existed: it tries 2, which is free again.
      assertThrows(JournalFencedException.class, () -> MasterJournal.open(storage, DIR, 1 << 20, 2));
      third.append(List.of(event(3)));
    }
    try (MasterJournal next = MasterJournal.open(storage, DIR, 1 << 20)) {
      assertEquals(List.of(1L, 2L, 3L), seqs(next), "the newest master was not disturbed");
    }
  }
}
