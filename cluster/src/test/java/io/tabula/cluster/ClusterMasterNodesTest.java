package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.WritableFile;
import io.tabula.persistence.tablet.FileSweeper;
import io.tabula.persistence.wal.LogFolderMissingException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's fence of the commit-log folders a tablet's placement names, before the tablet
 * opens (docs/fencing.md, "Before a tablet opens"; {@code OpenChecks} asks, {@link
 * ClusterMasterNodes#fenceLogs} fences), on a node of a real (one-member) actor system.
 */
class ClusterMasterNodesTest {
  private static ActorTestKit kit;

  @TempDir
  Path dir;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create(ConfigFactory.parseString("""
        pekko.actor.provider = cluster
        pekko.remote.artery.canonical.hostname = 127.0.0.1
        pekko.remote.artery.canonical.port = 0
        """));
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  /**
   * A named log's folder always exists on the cluster's root: its log made it when it opened,
   * and nothing removes it. So a named folder missing from the root means this root is not the
   * one its writer wrote (a copy of the root, another mount): fencing it there would make the
   * folder with nothing in it but the marker, and the next opener would replay that empty
   * folder as the log, losing every write it held, silently. The fence is refused (the open
   * waits, the master answers UNAVAILABLE), and nothing is made.
   */
  @Test
  void aNamedLogWhoseFolderIsNotOnTheRootIsNotFencedNorMadeUp() throws Exception {
    FileStorage root = new FileStorage(dir);
    UUID id = RootIdentity.establish(root);
    try (WritableFile f = root.create("logs/n1.a/000001.log")) {
      f.append(new byte[] {1, 2, 3});
      f.sync();
    }
    ClusterMasterNodes nodes = new ClusterMasterNodes(kit.system(), Cluster.get(kit.system()), "n1", root,
        dir.toString(), id, new FileSweeper(root, Duration.ofMinutes(15)));

    nodes.fenceLogs(List.of("n1.a")).toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertTrue(root.isFenced("logs/n1.a"), "a named folder that is there is fenced");

    ExecutionException refused = assertThrows(ExecutionException.class,
        () -> nodes.fenceLogs(List.of("n2.b")).toCompletableFuture().get(30, TimeUnit.SECONDS),
        "a named folder that is not on the root was fenced");
    assertTrue(causes(refused).anyMatch(LogFolderMissingException.class::isInstance), refused.toString());
    assertFalse(root.exists("logs/n2.b"), "no folder was made for the next opener to replay as the log");
    assertThrows(ExecutionException.class,
        () -> nodes.fenceLogs(List.of("n2.b")).toCompletableFuture().get(30, TimeUnit.SECONDS), "nor at a retry");
    assertFalse(root.exists("logs/n2.b"));
  }

  private static Stream<Throwable> causes(Throwable t) {
    return Stream.iterate(t, java.util.Objects::nonNull, Throwable::getCause);
  }

}
