package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The log writer's look at the fence (docs/fencing.md, "The argument", Guarantee 1 (b): after
 * the group's write, a check found no {@code FENCED} in the folder, and only then was the group
 * acknowledged) holds whatever the look meets: it acknowledges only on a clear "not fenced".
 */
class CommitLogFenceTest {
  private static final String DIR = "logs/n1.a";

  @TempDir
  Path root;

  private static byte[] p(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Fencing review H5, at the writer: the folder's name becomes a link to itself while the
   * writer holds its segment open, so a look at {@code FENCED} fails with ELOOP. That is not
   * "not fenced": the group is not acknowledged, and the log is lost.
   */
  @Test
  void aFenceThatCannotBeLookedForIsNoReasonToAcknowledge() throws IOException {
    CommitLog log = CommitLog.open(new FileStorage(root), DIR, CommitLogTest.PLAIN);
    log.append("t", 1, p("one")).join();
    Path folder = root.resolve(DIR);
    Files.move(folder, folder.resolveSibling("elsewhere"));
    Files.createSymbolicLink(folder, folder);
    CompletionException e = assertThrows(CompletionException.class, () -> log.append("t", 2, p("two")).join());
    assertInstanceOf(LogSyncFailedException.class, e.getCause(), "lost, as after any look that cannot be told");
    assertInstanceOf(LogSyncFailedException.class, log.whenLost().join());
    assertThrows(IOException.class, log::close);
  }

  /**
   * A storage whose look at the fence fails with an unchecked error other than an I/O error:
   * the writer loses the log and fails the group, rather than dying with the group's futures
   * never completed.
   */
  @Test
  void aFenceLookThatBreaksLosesTheLog() throws Exception {
    FileStorage files = new FileStorage(root);
    CommitLog log = CommitLog.open(new ForwardingStorage(files) {
      @Override
      public boolean isFenced(String dir) {
        throw new IllegalStateException("injected: the storage's client is broken");
      }
    }, DIR, CommitLogTest.PLAIN);
    CompletableFuture<Void> write = log.append("t", 1, p("one"));
    ExecutionException e = assertThrows(ExecutionException.class, () -> write.get(20, TimeUnit.SECONDS),
        "the write is answered, not left waiting");
    assertInstanceOf(LogSyncFailedException.class, e.getCause());
    assertThrows(IOException.class, log::close);
  }

  /**
   * Fencing review H7: a log in {@link Durability#OS_BUFFERED} mode looks at the fence after each
   * group's write too. A node that was paused or cut off, and resumes after the fence, would
   * otherwise acknowledge writes the recovery (which read the folder already) never sees: lost
   * with no power cut. The mode's only risk is a power cut or kernel crash.
   */
  @Test
  void aBufferedLogAcknowledgesNothingAfterTheFence() throws IOException {
    CommitLog log = CommitLog.open(new FileStorage(root), DIR, new CommitLogOptions(64L << 20, Durability.OS_BUFFERED));
    log.append("t", 1, p("before")).join();
    new FileStorage(root).fence(DIR); // another node, sharing the root
    CompletionException e = assertThrows(CompletionException.class, () -> log.append("t", 2, p("after")).join());
    assertInstanceOf(LogFencedException.class, e.getCause());
    assertInstanceOf(LogFencedException.class, log.whenLost().join());
    assertThrows(IOException.class, log::close);
  }

  /**
   * Removes the log folder as a later life of the node sweeping it used to, after the master
   * fenced it: every file ({@code FENCED} included), then the folder.
   */
  private void sweep() throws IOException {
    Storage other = new FileStorage(root); // another process sharing the root
    other.fence(DIR);
    for (String name : other.list(DIR)) {
      other.delete(Storage.path(DIR, name));
    }
    other.delete(DIR);
  }

  /**
   * Fencing review H2: a later life of the node removed this (earlier, stalled) life's log
   * folder, marker included. A folder that is gone reads as fenced (docs/fencing.md, Guarantee 1
   * (b): the check after the write must see the fence), and the log makes no folder again, so
   * the next write fails as fenced, whether it goes to the segment still open, to a new plain
   * segment after a roll, or to a prepared one; and nothing reappears on disk.
   */
  @ParameterizedTest
  @ValueSource(strings = {"the segment still open", "a new segment after a roll", "a prepared segment"})
  void aLogWhoseFolderWasRemovedAcknowledgesNothingAndMakesItNoMore(String next) throws Exception {
    CommitLogOptions options = switch (next) {
      case "the segment still open" -> CommitLogTest.PLAIN;
      case "a new segment after a roll" -> new CommitLogOptions(4096, Durability.FSYNC, false);
      default -> CommitLogTest.PREPARED;
    };
    CommitLog log = CommitLog.open(new FileStorage(root), DIR, options);
    log.append("t", 1, p("one")).join();
    if (options.segmentBytes() == 4096) {
      log.append("t", 2, new byte[5000]).join(); // past the segment's size: sealed after it, before the next group
    }
    if (options.preallocate()) {
      assertTrue(log.awaitPreparedSegment(30_000), "a segment is ready for the next write");
    }
    sweep();
    CompletionException e = assertThrows(CompletionException.class, () -> log.append("t", 3, p("three")).join());
    assertInstanceOf(LogFencedException.class, e.getCause());
    assertTrue(log.isFenced());
    assertThrows(IOException.class, log::close);
    assertFalse(Files.exists(root.resolve(DIR)), "the folder is not made again");
  }

  /**
   * Fencing review H2: a folder named for recovery that does not exist is an error of its own
   * type, not an empty log. Replaying nothing would let the master forget a log with
   * acknowledged writes (docs/fencing.md, Guarantee 1: the new owner "reads every segment of F").
   */
  @Test
  void aMissingLogFolderFailsItsRecoveryByType() throws IOException {
    FileStorage storage = new FileStorage(root);
    LogFolderMissingException read = assertThrows(LogFolderMissingException.class,
        () -> CommitLog.readFolder(storage, DIR, (id, seq, payload) -> { }));
    assertEquals(DIR, read.dir());
    assertThrows(LogFolderMissingException.class,
        () -> LogPieces.replay(storage, DIR, "t", (id, seq, payload) -> { }, (what, why) -> { }));
    assertThrows(LogFolderMissingException.class, () -> LogPieces.sortSegment(storage, DIR, "000001.log"));
    assertFalse(Files.exists(root.resolve(DIR)), "and looking made no folder");
    CommitLog.open(storage, DIR, CommitLogTest.PLAIN).close();
    assertEquals(0, CommitLog.readFolder(storage, DIR, (id, seq, payload) -> { }),
        "a log that opened and wrote nothing has its folder, empty");
  }
}
