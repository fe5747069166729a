package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.master.Directory;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.RootMismatchException;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's fence of a dead node's commit logs (docs/fencing.md), made only on the
 * cluster's storage root (FENCING-REVIEW H6): on another root it would mark folders no writer
 * of the cluster looks at, and the recovery after it would find the node's logs absent.
 */
class LogSweeperTest {
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
    java.util.concurrent.atomic.AtomicBoolean lost = new java.util.concurrent.atomic.AtomicBoolean();
    LogSweeper sweeper = new LogSweeper(root, "n1", "n1.c", Runnable::run, lost::get);
    sweeper.fenceEarlierLives();
    assertTrue(root.isFenced("logs/n1.a") && root.isFenced("logs/n1.b"));
    assertFalse(root.isFenced("logs/n1.c") || root.isFenced("logs/n2.a"), "not its own, nor another node's");

    sweeper.sweep(Directory.EMPTY); // no tablet names any of them

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
    java.util.concurrent.atomic.AtomicBoolean lost = new java.util.concurrent.atomic.AtomicBoolean();
    LogSweeper b = new LogSweeper(root, "n1", "n1.b", Runnable::run, lost::get);
    b.fenceEarlierLives();
    segment(root, "n1.c"); // a later life, started while n1.b was frozen
    b.sweep(Directory.EMPTY);
    assertEquals(List.of("000001.log"), root.list("logs/n1.c"), "the later life's log is untouched");
    assertFalse(root.isFenced("logs/n1.c"), "and not fenced");
    assertEquals(List.of(Storage.FENCE_MARKER), root.list("logs/n1.a"), "the earlier life's is emptied");

    segment(root, "n1.a2");
    LogSweeper c = new LogSweeper(root, "n1", "n1.c", Runnable::run, lost::get);
    c.fenceEarlierLives();
    lost.set(true);
    c.sweep(Directory.EMPTY);
    assertTrue(root.list("logs/n1.b").contains("000001.log"), "nothing is emptied once its own log is lost");
  }
}
