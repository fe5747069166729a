package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
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
}
