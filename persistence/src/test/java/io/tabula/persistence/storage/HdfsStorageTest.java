package io.tabula.persistence.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.wal.CommitLog;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import io.tabula.persistence.wal.LogLostException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HdfsStorage} against a real (in-process) HDFS: the storage contract the engine
 * relies on, and fencing of a commit log whose writer is still alive (a frozen node that
 * wakes up), with two separate HDFS clients standing for the two nodes.
 */
class HdfsStorageTest {
  @TempDir
  static Path base;
  private static MiniHdfs hdfs;
  private static int folders;

  @BeforeAll
  static void startHdfs() throws IOException {
    hdfs = MiniHdfs.start(base);
  }

  @AfterAll
  static void stopHdfs() {
    if (hdfs != null) {
      hdfs.close();
    }
  }

  private static String folder() {
    return "contract-" + ++folders;
  }

  /**
   * The master's journal renews its epoch on HDFS: the renewal closes its segment before it
   * fences its own folder (the fence recovers the leases of the folder's open files), and the
   * successor and a later master read every record.
   */
  @Test
  void theMastersJournalRenewsItsEpochOnHdfs() throws IOException {
    try (HdfsStorage s = hdfs.storage(folder())) {
      io.tabula.persistence.journal.MasterJournal first = io.tabula.persistence.journal.MasterJournal.open(s, "journal",
          1 << 20);
      first.append(List.of(journalEvent(1), journalEvent(2)));
      try (io.tabula.persistence.journal.MasterJournal next = first.successor()) {
        assertTrue(first.isFenced(), "the renewed epoch is fenced");
        next.append(List.of(journalEvent(3)));
      }
      try (io.tabula.persistence.journal.MasterJournal later = io.tabula.persistence.journal.MasterJournal.open(s,
          "journal", 1 << 20)) {
        assertEquals(List.of(1L, 2L, 3L), later.events("m", 1, Long.MAX_VALUE, Long.MAX_VALUE).stream()
            .map(io.tabula.persistence.journal.JournalRecord.Event::sequenceNr).toList());
      }
    }
  }

  private static io.tabula.persistence.journal.JournalRecord.Event journalEvent(long seq) {
    return new io.tabula.persistence.journal.JournalRecord.Event("m", seq, "w", seq, "", 1, "E",
        new byte[] {(byte) seq});
  }

  @Test
  void filesNamesAndAtomicPublishing() throws IOException {
    try (HdfsStorage s = hdfs.storage(folder())) {
      assertEquals(List.of(), s.list("nothing/here"));
      try (WritableFile w = s.createNew("a/one")) {
        w.append("hello".getBytes(StandardCharsets.UTF_8));
        w.sync();
        assertEquals(5, w.position());
        // Synced bytes of a file still open are readable, to the synced length.
        try (ReadableFile r = s.open("a/one")) {
          assertEquals(5, r.size());
          assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), r.readFully(0, 5));
        }
        // Newer than any time the namenode's clock gives (the sweep compares with that clock
        // alone, never with this machine's): a file still being written is never old.
        assertEquals(Long.MAX_VALUE, s.modifiedMillis("a/one"), "an open file counts as being written now");
        assertThrows(IOException.class, () -> w.truncate(2), "HDFS cannot cut back an open file");
        w.truncate(5); // cutting nothing is fine
      }
      assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> s.createNew("a/one"));
      try (ReadableFile r = s.open("a/one")) {
        assertThrows(java.io.EOFException.class, () -> r.readFully(3, 3));
      }

      write(s, "a/two.tmp", "second");
      assertTrue(s.renameIfAbsent("a/two.tmp", "a/two"));
      write(s, "a/three.tmp", "third");
      assertFalse(s.renameIfAbsent("a/three.tmp", "a/two"), "a taken name is refused");
      assertFalse(s.exists("a/three.tmp"), "the loser's file goes");
      assertEquals("second", read(s, "a/two"));

      write(s, "a/four.tmp", "fourth");
      s.rename("a/four.tmp", "a/two");
      assertEquals("fourth", read(s, "a/two"), "rename replaces");
      assertEquals(List.of("one", "two"), s.list("a"));

      assertThrows(IOException.class, () -> s.delete("a"), "a folder that is not empty stays");
      s.delete("a/one");
      s.delete("a/two");
      s.delete("a/missing");
      s.delete("a");
      assertFalse(s.exists("a"));
    }
  }

  /** {@link FolderContract}: here a look at the fence is one namenode call. */
  @Test
  void foldersAreMadeOnlyOnPurposeAndAMissingOneIsFenced() throws IOException {
    try (HdfsStorage s = hdfs.storage(folder())) {
      FolderContract.check(s);
    }
  }

  /**
   * A node's log writer goes on after another node fenced its folder (it was frozen, say):
   * the fence recovers the HDFS leases, so the writer's next sync fails and it acknowledges
   * nothing more; everything it acknowledged before is in what the recovering node reads.
   */
  @Test
  void fencingStopsALiveWriterAndKeepsWhatItAcknowledged() throws Exception {
    String root = folder();
    String dir = "logs/node-a";
    try (HdfsStorage writerSide = hdfs.storage(root); HdfsStorage fencer = hdfs.storage(root)) {
      CommitLog log = CommitLog.open(writerSide, dir, new CommitLogOptions(4096, Durability.FSYNC));
      List<String> acked = new ArrayList<>();
      for (int i = 0; i < 50; i++) { // several segments, the last one open
        String v = "v" + i;
        log.append("t1", i + 1, v.getBytes(StandardCharsets.UTF_8)).join();
        acked.add(v);
      }
      long t = System.nanoTime();
      fencer.fence(dir);
      double fenceSeconds = (System.nanoTime() - t) / 1e9;
      CompletionException refused = assertThrows(CompletionException.class,
          () -> log.append("t1", 51, "late".getBytes(StandardCharsets.UTF_8)).join());
      assertTrue(LogLostException.in(refused), "the fenced writer's append fails as a lost log: " + refused);
      assertTrue(causes(refused).anyMatch(c -> c instanceof io.tabula.persistence.wal.LogFencedException),
          "and as fenced, not as a disk failure: " + refused);
      assertTrue(log.isFenced());
      List<String> read = new ArrayList<>();
      CommitLog.readFolder(fencer, dir, (tablet, seq, payload) -> read.add(new String(payload, StandardCharsets.UTF_8)));
      assertEquals(acked, read);
      System.out.printf("HdfsStorageTest: fencing a live writer's log folder (HDFS lease recovery) took %.1f s%n",
          fenceSeconds);
      assertThrows(IOException.class, log::close, "a lost log says so at close");
    }
  }

  /**
   * {@code durability = os-buffered} on HDFS: a record is acknowledged without {@code hsync},
   * but it must have left the writer's process, so that a crash, pause or partition of the
   * node (and the fence that follows) loses none (docs/fencing.md: what the writer acknowledged
   * before the fence, a recovery after it reads). The HDFS client keeps small writes in its
   * own buffer until a 64 KiB packet fills; so each group is {@code hflush}ed (to the
   * datanodes' memory) before the writer looks at the fence. Here a few small records,
   * acknowledged, then a fence from another client: the lease recovery settles the file at
   * what the datanodes hold, and the recovering node reads every record.
   */
  @Test
  void aBufferedLogKeepsWhatItAcknowledgedThroughAFence() throws Exception {
    String root = folder();
    String dir = "logs/node-b";
    try (HdfsStorage writerSide = hdfs.storage(root); HdfsStorage fencer = hdfs.storage(root)) {
      CommitLog log = CommitLog.open(writerSide, dir, new CommitLogOptions(1 << 20, Durability.OS_BUFFERED));
      List<String> acked = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        String v = "b" + i;
        log.append("t1", i + 1, v.getBytes(StandardCharsets.UTF_8)).join();
        acked.add(v);
      }
      fencer.fence(dir);
      List<String> read = new ArrayList<>();
      CommitLog.readFolder(fencer, dir, (tablet, seq, payload) -> read.add(new String(payload, StandardCharsets.UTF_8)));
      assertEquals(acked, read, "every record the buffered log acknowledged, read after the fence");
      CompletionException refused = assertThrows(CompletionException.class,
          () -> log.append("t1", 6, "late".getBytes(StandardCharsets.UTF_8)).join());
      assertTrue(LogLostException.in(refused), "the fenced writer acknowledges nothing more: " + refused);
      assertThrows(IOException.class, log::close, "a lost log says so at close");
    }
  }

  /**
   * The join check's probe of the storage root (docs/formats/storage-probe.md) through the
   * HDFS seam: written by one node's client, read by another's on the same root, and absent
   * from another root on the same HDFS.
   */
  @Test
  void aProbeWrittenByOneClientIsReadByAnotherOnTheSameRoot() throws IOException {
    String root = folder();
    try (HdfsStorage joining = hdfs.storage(root); HdfsStorage member = hdfs.storage(root);
        HdfsStorage elsewhere = hdfs.storage(folder())) {
      java.util.UUID nonce = StorageProbe.write(joining, "n2.b");
      assertEquals(java.util.Optional.of(nonce), StorageProbe.read(member, "n2.b"));
      assertEquals(java.util.Optional.empty(), StorageProbe.read(elsewhere, "n2.b"));
      StorageProbe.delete(joining, "n2.b");
      assertEquals(java.util.Optional.empty(), StorageProbe.read(member, "n2.b"));
    }
  }

  /** With the only datanode down, a lease recovery cannot finish: fencing says so, in time. */
  @Test
  void aStuckLeaseRecoveryIsReportedAfterItsTimeout(@TempDir Path own) throws Exception {
    try (MiniHdfs lone = MiniHdfs.start(own)) {
      URI uri = URI.create(lone.uri() + "/stuck");
      try (HdfsStorage writer = new HdfsStorage(uri, new Configuration(), Duration.ofSeconds(2));
          HdfsStorage fencer = new HdfsStorage(uri, new Configuration(), Duration.ofSeconds(3))) {
        WritableFile w = writer.create("logs/n/000001.log");
        w.append(new byte[100]);
        w.sync();
        lone.stopDataNodes();
        long t = System.nanoTime();
        LeaseRecoveryTimeoutException e = assertThrows(LeaseRecoveryTimeoutException.class,
            () -> fencer.fence("logs/n"));
        double waited = (System.nanoTime() - t) / 1e9;
        assertEquals("logs/n/000001.log", e.path());
        assertTrue(waited >= 3 && waited < 20, "reported after its timeout, not long after: " + waited + " s");
        writer.abandonWrites();
      }
    }
  }

  private static java.util.stream.Stream<Throwable> causes(Throwable t) {
    return java.util.stream.Stream.iterate(t, java.util.Objects::nonNull, Throwable::getCause);
  }

  private static void write(Storage s, String path, String text) throws IOException {
    try (WritableFile w = s.create(path)) {
      w.append(text.getBytes(StandardCharsets.UTF_8));
      w.sync();
    }
  }

  private static String read(Storage s, String path) throws IOException {
    try (ReadableFile r = s.open(path)) {
      return new String(r.readFully(0, (int) r.size()), StandardCharsets.UTF_8);
    }
  }
}
