package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.LeaseRecoveryTimeoutException;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.RootMismatchException;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's fence of a dead node's commit logs (docs/fencing.md), made only on the
 * cluster's storage root (FENCING-REVIEW H6): on another root it would mark folders no writer
 * of the cluster looks at, and the recovery after it would find the node's logs absent.
 */
class LogSweeperTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final java.util.function.Consumer<Runnable> NO_RETRY = task -> {
    throw new AssertionError("no fence was to be tried again");
  };

  /** The master's answer when no placement names any folder asked about. */
  private static final java.util.function.Function<List<String>, java.util.concurrent.CompletionStage<List<String>>>
      NONE_NAMED = folders -> java.util.concurrent.CompletableFuture.completedFuture(List.of());

  @TempDir
  Path dir;

  private static void segment(FileStorage root, String folder) throws IOException {
    try (WritableFile f = root.create("logs/" + folder + "/000001.log")) {
      f.append(new byte[] {1, 2, 3});
      f.sync();
    }
  }

  @Test
  void everyLifeOfTheNodeIsFencedOnTheClustersRoot() throws IOException {
    FileStorage root = new FileStorage(dir.resolve("a"));
    UUID id = RootIdentity.establish(root);
    for (String f : List.of("n1.a", "n1.b", "n10.a", "n2.a")) {
      segment(root, f);
    }
    assertEquals(List.of("n1.a", "n1.b"), LogSweeper.fenceAll(root, "root A", id, "n1", Set.of()));
    assertTrue(root.isFenced("logs/n1.a") && root.isFenced("logs/n1.b"));
    assertFalse(root.isFenced("logs/n10.a") || root.isFenced("logs/n2.a"), "only n1's");
    assertEquals(List.of(), LogSweeper.fenceAll(root, "root A", id, "n3", Set.of()), "a node with no folder: none fenced");
    assertFalse(root.exists("logs/n3"), "and none made up");
  }

  @Test
  void noFenceIsMadeOnARootThatIsNotTheClusters() throws IOException {
    UUID clusters = RootIdentity.establish(new FileStorage(dir.resolve("a")));
    Path mount = dir.resolve("b");
    FileStorage other = new FileStorage(mount);
    UUID others = RootIdentity.establish(other);
    segment(other, "n1.a");
    RootMismatchException e = assertThrows(RootMismatchException.class,
        () -> LogSweeper.fenceAll(other, mount.toString(), clusters, "n1", Set.of()));
    assertEquals(others, e.found());
    assertTrue(e.getMessage().contains(mount.toString()) && e.getMessage().contains(clusters.toString())
        && e.getMessage().contains("node n1"), e.getMessage());
    assertFalse(other.isFenced("logs/n1.a"), "nothing fenced there");

    Files.delete(mount.resolve(RootIdentity.FILE));
    assertThrows(RootMismatchException.class, () -> LogSweeper.fenceAll(other, mount.toString(), clusters, "n1", Set.of()),
        "nor on a root without an identity");
    assertFalse(other.isFenced("logs/n1.a"));
  }

  @Test
  void aLiveMembersLifeIsSpared() throws IOException {
    FileStorage root = new FileStorage(dir.resolve("a"));
    UUID id = RootIdentity.establish(root);
    segment(root, "n1.a");
    segment(root, "n1.b");
    assertEquals(List.of("n1.a"), LogSweeper.fenceAll(root, "root A", id, "n1", Set.of("n1.b")));
    assertFalse(root.isFenced("logs/n1.b"), "the live start's log is not fenced");
  }

  /**
   * One life per log folder (docs/fencing.md): a later life fences its earlier lives' folders,
   * and empties those no tablet names, but never deletes a folder or its fence marker, so a
   * process of an earlier life that resumes still finds its fence (SameNameRestartTest shows
   * what deleting them cost).
   */
  @Test
  void aLaterLifeFencesItsEarlierLivesAndEmptiesThemButKeepsTheirFences() throws IOException {
    FileStorage root = new FileStorage(dir.resolve("a"));
    RootIdentity.establish(root);
    for (String f : List.of("n1.a", "n1.b", "n1.c", "n2.a")) {
      segment(root, f);
    }
    AtomicBoolean lost = new AtomicBoolean();
    LogSweeper sweeper = new LogSweeper(root, "n1", "n1.c", Runnable::run, lost::get, NO_RETRY);
    sweeper.fenceEarlierLives(WAIT);
    assertTrue(root.isFenced("logs/n1.a") && root.isFenced("logs/n1.b"));
    assertFalse(root.isFenced("logs/n1.c") || root.isFenced("logs/n2.a"), "not its own, nor another node's");

    sweeper.sweep(NONE_NAMED); // no tablet names any of them

    assertEquals(List.of(Storage.FENCE_MARKER), root.list("logs/n1.a"), "emptied; its fence stays");
    assertEquals(List.of(Storage.FENCE_MARKER), root.list("logs/n1.b"));
    assertEquals(List.of("000001.log"), root.list("logs/n1.c"), "its own log is left alone");
  }

  /**
   * A life that was frozen and resumed after a later life of its node started must not take the
   * later life for an earlier one: it empties only the folders it fenced at its own start (the
   * nemesis schedule found a resumed life emptying its successor's log, with 390 acknowledged
   * writes in it), and nothing once its own log is lost.
   */
  @Test
  void aLifeNeverEmptiesAFolderThatAppearedAfterItStarted() throws IOException {
    FileStorage root = new FileStorage(dir.resolve("a"));
    RootIdentity.establish(root);
    segment(root, "n1.a");
    segment(root, "n1.b");
    AtomicBoolean lost = new AtomicBoolean();
    LogSweeper b = new LogSweeper(root, "n1", "n1.b", Runnable::run, lost::get, NO_RETRY);
    b.fenceEarlierLives(WAIT);
    segment(root, "n1.c"); // a later life, started while n1.b was frozen
    b.sweep(NONE_NAMED);
    assertEquals(List.of("000001.log"), root.list("logs/n1.c"), "the later life's log is untouched");
    assertFalse(root.isFenced("logs/n1.c"), "and not fenced");
    assertEquals(List.of(Storage.FENCE_MARKER), root.list("logs/n1.a"), "the earlier life's is emptied");

    segment(root, "n1.a2");
    LogSweeper c = new LogSweeper(root, "n1", "n1.c", Runnable::run, lost::get, NO_RETRY);
    c.fenceEarlierLives(WAIT);
    lost.set(true);
    c.sweep(NONE_NAMED);
    assertTrue(root.list("logs/n1.b").contains("000001.log"), "nothing is emptied once its own log is lost");
  }

  /**
   * At start a node fences its earlier lives' logs; on HDFS a fence waits for the lease
   * recovery of each file, and one stuck last block (its datanodes dead) made the fence fail
   * after its time-out, and the node fail to start, at every attempt: a node that could never
   * start again under its name. The start goes on (the master fences every log a tablet names
   * before the tablet opens anywhere, docs/fencing.md "Before a tablet opens", so the
   * start-time fence only makes a resumed earlier life stop sooner); the folder is fenced
   * later, in the background, and only then emptied (one life per log folder: a life empties
   * only folders it fenced).
   */
  @Test
  void aFenceThatFailsAtStartDoesNotKeepTheNodeFromStartingAndIsMadeLater() throws IOException {
    AtomicBoolean stuck = new AtomicBoolean(true);
    FileStorage files = new FileStorage(dir.resolve("a"));
    Storage root = new ForwardingStorage(files) {
      @Override
      public void fence(String folder) throws IOException {
        if (stuck.get() && folder.equals("logs/n1.a")) {
          throw new LeaseRecoveryTimeoutException(folder + "/000001.log", Duration.ofSeconds(60));
        }
        super.fence(folder);
      }
    };
    RootIdentity.establish(root);
    for (String f : List.of("n1.a", "n1.b", "n1.c")) {
      segment(files, f);
    }
    AtomicBoolean lost = new AtomicBoolean();
    List<Runnable> retries = new ArrayList<>();
    LogSweeper sweeper = new LogSweeper(root, "n1", "n1.c", Runnable::run, lost::get, retries::add);
    sweeper.fenceEarlierLives(WAIT);
    assertTrue(root.isFenced("logs/n1.b"), "the earlier life whose fence works is fenced");
    assertFalse(root.isFenced("logs/n1.a"));
    assertEquals(1, retries.size(), "the failed fence is tried again later");

    sweeper.sweep(NONE_NAMED);
    assertEquals(List.of("000001.log"), root.list("logs/n1.a"), "a folder that is not fenced is not emptied");
    assertEquals(List.of(Storage.FENCE_MARKER), root.list("logs/n1.b"));

    retries.remove(0).run();
    assertEquals(1, retries.size(), "still stuck: tried again later");
    stuck.set(false);
    retries.remove(0).run();
    assertTrue(root.isFenced("logs/n1.a"), "fenced once the lease recovery works");
    assertEquals(List.of(), retries, "and not tried again");
    sweeper.sweep(NONE_NAMED);
    assertEquals(List.of(Storage.FENCE_MARKER), root.list("logs/n1.a"), "emptied once fenced");
  }

  /**
   * A fence that hangs (a lease recovery that has not timed out yet) keeps the start waiting
   * {@code wait} at most; it goes on in the background, and its folder may be emptied once it
   * is done. A life that stops tries no fence again.
   */
  @Test
  void aFenceThatHangsAtStartGoesOnInTheBackground() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    FileStorage files = new FileStorage(dir.resolve("a"));
    Storage root = new ForwardingStorage(files) {
      @Override
      public void fence(String folder) throws IOException {
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException();
        }
        super.fence(folder);
      }
    };
    RootIdentity.establish(root);
    segment(files, "n1.a");
    segment(files, "n1.b");
    ExecutorService io = Executors.newSingleThreadExecutor();
    try {
      AtomicBoolean stopping = new AtomicBoolean();
      List<Runnable> retries = new ArrayList<>();
      LogSweeper sweeper = new LogSweeper(root, "n1", "n1.b", io, stopping::get, retries::add);
      sweeper.fenceEarlierLives(Duration.ofMillis(50));
      assertFalse(root.isFenced("logs/n1.a"), "the start went on before the fence was made");
      release.countDown();
      io.submit(() -> { }).get(30, TimeUnit.SECONDS); // the fence, queued first, is done
      assertTrue(root.isFenced("logs/n1.a"));
      sweeper.sweep(NONE_NAMED);
      io.submit(() -> { }).get(30, TimeUnit.SECONDS);
      assertEquals(List.of(Storage.FENCE_MARKER), root.list("logs/n1.a"), "emptied once fenced");
      assertEquals(List.of(), retries);
    } finally {
      io.shutdownNow();
    }
  }

  /** A life that stops (its log lost, its actor system shutting down) does not try a failed fence again. */
  @Test
  void aLifeThatStopsTriesNoFenceAgain() throws IOException {
    FileStorage files = new FileStorage(dir.resolve("a"));
    Storage root = new ForwardingStorage(files) {
      @Override
      public void fence(String folder) throws IOException {
        throw new IOException("injected: the fence fails");
      }
    };
    RootIdentity.establish(root);
    segment(files, "n1.a");
    AtomicBoolean stopping = new AtomicBoolean();
    List<Runnable> retries = new ArrayList<>();
    LogSweeper sweeper = new LogSweeper(root, "n1", "n1.b", Runnable::run, stopping::get, retries::add);
    sweeper.fenceEarlierLives(WAIT);
    assertEquals(1, retries.size());
    stopping.set(true);
    retries.remove(0).run();
    assertEquals(List.of(), retries, "not tried again once stopping");
  }

  @Test
  void aStartThatCannotListTheLogsFails() throws IOException {
    FileStorage files = new FileStorage(dir.resolve("a"));
    Storage root = new ForwardingStorage(files) {
      @Override
      public List<String> list(String folder) throws IOException {
        throw new IOException("injected: the listing fails");
      }
    };
    LogSweeper sweeper = new LogSweeper(root, "n1", "n1.b", Runnable::run, () -> false, NO_RETRY);
    assertThrows(IOException.class, () -> sweeper.fenceEarlierLives(WAIT),
        "which folders are earlier lives' cannot be known later");
  }

  /**
   * The node asks the master which folders a placement names: its own copy of the directory
   * need not hold the tablets that moved away from it, whose placements may name its earlier
   * lives' logs. A folder named is kept whole; nothing is emptied when the master cannot be
   * asked; a folder found empty at sweeps far enough apart is not asked about again.
   */
  @Test
  void aFolderTheMasterSaysIsNamedIsKeptAndAFailedAskEmptiesNothing() throws IOException {
    FileStorage root = new FileStorage(dir.resolve("a"));
    RootIdentity.establish(root);
    segment(root, "n1.a");
    segment(root, "n1.b");
    LogSweeper sweeper = new LogSweeper(root, "n1", "n1.c", Runnable::run, () -> false, NO_RETRY);
    sweeper.fenceEarlierLives(WAIT);

    sweeper.sweep(folders -> java.util.concurrent.CompletableFuture.failedFuture(
        new java.util.concurrent.TimeoutException("injected: the master does not answer")));
    assertEquals(List.of("000001.log"), root.list("logs/n1.a").stream().filter(n -> !n.equals(Storage.FENCE_MARKER))
        .toList(), "nothing is emptied without the master's answer");

    List<List<String>> asked = new java.util.ArrayList<>();
    java.util.function.Function<List<String>, java.util.concurrent.CompletionStage<List<String>>> aNamed = folders -> {
      asked.add(folders.stream().sorted().toList());
      return java.util.concurrent.CompletableFuture.completedFuture(List.of("n1.a"));
    };
    sweeper.sweep(aNamed);
    assertTrue(root.list("logs/n1.a").contains("000001.log"), "a placement names it: its next opening replays it");
    assertEquals(List.of(Storage.FENCE_MARKER), root.list("logs/n1.b"), "emptied");
    sweeper.sweep(aNamed); // finds n1.b empty
    sweeper.sweep(aNamed); // and again, but not yet RETIRE_AFTER later: a recovery may still write there
    sweeper.retireAfter(Duration.ZERO);
    sweeper.sweep(aNamed); // empty again, long enough after: retired
    sweeper.sweep(aNamed);
    assertEquals(List.of(List.of("n1.a", "n1.b"), List.of("n1.a", "n1.b"), List.of("n1.a", "n1.b"),
        List.of("n1.a", "n1.b"), List.of("n1.a")), asked);
  }
}
