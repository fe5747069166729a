package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ReadableFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The preparer's numbers: whatever the timing of its thread against the writer's calls, the
 * segments the writer gets (prepared or plain) are numbered in strictly increasing order,
 * every prepared one is blank when taken, and the ones it made and nobody took are left
 * blank, never deleted.
 */
class SegmentPreparerTest {
  @TempDir
  Path root;

  @Test
  void theWritersSegmentsOnlyGoUpWhateverTheTiming() throws Exception {
    FileStorage storage = new FileStorage(root);
    storage.createDirectories("logs"); // the log makes its folder; the preparer never does
    List<String> leftBlank = new CopyOnWriteArrayList<>();
    List<Long> got = new ArrayList<>();
    int prepared = 0;
    Random rnd = new Random(42);
    try (SegmentPreparer p = new SegmentPreparer(storage, "logs", 4096, 0, true, () -> false,
        (what, e) -> {
          throw new AssertionError(what, e);
        }, leftBlank::add, () -> 0L)) {
      for (int i = 0; i < 300; i++) {
        SegmentPreparer.Prepared taken = null;
        if (rnd.nextBoolean()) {
          SegmentPreparer.Next next = p.next(); // the writer has no segment
          got.add(next.number());
          taken = next.prepared();
        } else {
          taken = p.take(); // the writer moves from a plain or full segment, if one is ready
          if (taken != null) {
            got.add(taken.number());
          }
        }
        if (taken != null) {
          prepared++;
          assertEquals(CommitLogFormat.HEADER_SIZE, taken.file().position());
          try (ReadableFile f = storage.open(taken.file().path())) {
            assertTrue(LogReader.blank(f.readFully(0, (int) f.size())), taken.file().path());
            assertEquals(4096, f.size());
          }
          taken.file().close();
        }
        if (rnd.nextBoolean()) {
          Thread.sleep(rnd.nextInt(10)); // sometimes long enough for a preparation to finish
        }
      }
    }
    for (int i = 1; i < got.size(); i++) {
      assertTrue(got.get(i) > got.get(i - 1), "segment numbers go up: " + got);
    }
    assertTrue(prepared > 10 && prepared < got.size(), prepared + " prepared of " + got.size()
        + ": both kinds were handed out");
    for (String blank : leftBlank) {
      long n = CommitLogFormat.segmentNumber(blank.substring(blank.lastIndexOf('/') + 1));
      assertTrue(!got.contains(n), "a segment left blank was never handed out: " + blank);
      assertTrue(storage.exists(blank), "left, not deleted: " + blank);
    }
    assertEquals(List.of(), storage.list("logs").stream().filter(n -> n.endsWith(".prep")).toList());
  }

  /**
   * While the log writes faster than {@link SegmentPreparer#BUSY_BYTES_PER_SECOND}, no segment
   * is prepared (the writer appends to plain ones); once it slows down, one is.
   */
  @Test
  void aBusyLogIsLeftToPlainSegments() throws Exception {
    FileStorage storage = new FileStorage(root);
    storage.createDirectories("logs"); // the log makes its folder; the preparer never does
    AtomicBoolean busy = new AtomicBoolean(true);
    long start = System.nanoTime();
    AtomicLong quietBytes = new AtomicLong();
    // Busy: a byte per nanosecond, about 1 GB/s. Quiet: nothing more.
    LongSupplier logBytes = () -> busy.get() ? quietBytes.updateAndGet(b -> System.nanoTime() - start) : quietBytes.get();
    try (SegmentPreparer p = new SegmentPreparer(storage, "logs", 64L << 20, 0, true, () -> false,
        (what, e) -> {
          throw new AssertionError(what, e);
        }, what -> { }, logBytes)) {
      assertFalse(p.awaitReady(1_500), "no segment is prepared while the log is busy");
      long prepared = storage.list("logs").stream().filter(n -> n.endsWith(".prep")).count();
      assertEquals(1, prepared, "one preparation, begun and paused");
      busy.set(false);
      assertTrue(p.awaitReady(20_000), "the log is quiet: the segment is finished");
      assertEquals(1, p.next().number());
    }
  }
}
