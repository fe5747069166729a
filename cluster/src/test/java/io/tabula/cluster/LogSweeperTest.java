package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.RootMismatchException;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
    assertEquals(List.of("n1.a", "n1.b"), LogSweeper.fenceAll(root, "root A", id, "n1"));
    assertTrue(root.isFenced("logs/n1.a") && root.isFenced("logs/n1.b"));
    assertFalse(root.isFenced("logs/n10.a") || root.isFenced("logs/n2.a"), "only n1's");
    assertEquals(List.of(), LogSweeper.fenceAll(root, "root A", id, "n3"), "a node with no folder: none fenced");
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
        () -> LogSweeper.fenceAll(other, mount.toString(), clusters, "n1"));
    assertEquals(others, e.found());
    assertTrue(e.getMessage().contains(mount.toString()) && e.getMessage().contains(clusters.toString())
        && e.getMessage().contains("node n1"), e.getMessage());
    assertFalse(other.isFenced("logs/n1.a"), "nothing fenced there");

    Files.delete(mount.resolve(RootIdentity.FILE));
    assertThrows(RootMismatchException.class, () -> LogSweeper.fenceAll(other, mount.toString(), clusters, "n1"),
        "nor on a root without an identity");
    assertFalse(other.isFenced("logs/n1.a"));
  }
}
