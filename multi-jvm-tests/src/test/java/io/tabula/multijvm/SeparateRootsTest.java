package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.RootIdentity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Nodes that do not share one storage root (FENCING-REVIEW H6; docs/fencing.md's assumption
 * of one shared root): n1 on root A, n2 on root B joining n1, which is what two machines
 * with local disks look like. Were they one cluster, a tablet moved from n1 to n2 would open
 * on B, find no manifest there, and serve empty: every row lost, with no error anywhere.
 * The join must be refused, naming both roots, before any tablet can move, and n1 keeps
 * serving its rows.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class SeparateRootsTest {
  private static final List<String> KEYS = List.of("a1", "a2", "a3", "m1", "m2", "m3");

  @Test
  void aNodeOnAnotherStorageRootIsRefusedAtJoin() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      NodeJvm n1 = cluster.add("n1");
      ClusterFixture.createTable(n1, "t", List.of("k"));
      try (BigtableDataClient c = ClusterFixture.data(n1)) {
        write(c);
        assertEquals(KEYS, read(c), "the rows, through n1");
      }

      Path rootB = Files.createDirectories(cluster.root.resolve("data-b"));
      NodeJvm n2 = cluster.start("n2", rootB);
      if (readyOrExited(n2)) {
        // The cluster formed over two roots: this is what it costs.
        moveEvery(n1, "n2");
        try (BigtableDataClient c = ClusterFixture.data(n1)) {
          assertEquals(KEYS, read(c), "the rows read back through n1 after both tablets moved to n2, "
              + "which joined over another storage root");
        }
        fail("n2, on another storage root, joined n1's cluster");
      }
      assertFalse(n2.alive(), "n2 stopped");
      String idA = RootIdentity.read(new FileStorage(cluster.data)).orElseThrow().toString();
      String idB = RootIdentity.read(new FileStorage(rootB)).orElseThrow().toString();
      String refused = line(n2.tail(400), "tabula: the cluster");
      assertContains(refused, "refused this node at join", "n2 exits with why");
      assertContains(refused, rootB + " (root id " + idB + ")", "n2's error names its own root");
      assertContains(refused, "docs/deploy.md", "n2's error points at the deployment guide");
      String refusal = line(n1.tail(2000), "Found incompatible settings");
      assertContains(refusal, rootB + " (root id " + idB + ")", "n1's refusal names n2's root");
      assertContains(refusal, cluster.data + " (root id " + idA + ")", "n1's refusal names the cluster's root");
      assertContains(refusal, "one shared storage root", "n1's refusal says what is wrong");

      Map<String, String[]> tablets = ClusterFixture.tablets(n1, "t");
      for (String[] owner : tablets.values()) {
        assertEquals("n1", owner[0], "no tablet left n1");
      }
      try (BigtableDataClient c = ClusterFixture.data(n1)) {
        assertEquals(KEYS, read(c), "n1 still serves every row");
      }
    }
  }

  /**
   * A copy of the cluster's root (what {@code cp -a} of a data folder, a VM image or a restored
   * volume snapshot makes) carries the root's identity, so an identity alone cannot tell it from
   * the root. n2 started on a copy of n1's data folder, taken once n1 had written {@code
   * ROOT-ID}: were it let in, tablets moved to it would open from the copy's stale manifests and
   * its commit log would go to the copy, and so would the files it flushes when a tablet moves
   * on (or, were it to die, the master would fence its log on the real root, where the folder
   * does not exist, and the next owner would replay an empty folder): every row n2
   * acknowledged lost, silently. The join check must prove the two nodes see the same
   * storage (a probe file the joining node writes, which the member reads on its own root):
   * n2 is refused at join, both roots named, and n1 keeps serving (docs/fencing.md's
   * assumption of one shared storage root, checked at join).
   */
  @Test
  void aNodeOnACopyOfTheStorageRootIsRefusedAtJoin() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      NodeJvm n1 = cluster.add("n1");
      ClusterFixture.createTable(n1, "t", List.of("k"));
      Path copy = cluster.root.resolve("data-copy");
      copyTree(cluster.data, copy);
      NodeJvm n2 = cluster.start("n2", copy);
      if (readyOrExited(n2)) {
        // The cluster took a copy of its root for the root: this is what it costs.
        moveEvery(n1, "n2");
        try (BigtableDataClient c = ClusterFixture.data(n2)) {
          write(c);
          assertEquals(KEYS, read(c), "the rows, acknowledged by n2");
        }
        moveEvery(n1, "n1");
        try (BigtableDataClient c = ClusterFixture.data(n1)) {
          assertEquals(KEYS, read(c), "the rows n2 acknowledged, read through n1 after both tablets moved back from "
              + "n2, which joined over a copy of the storage root");
        }
        fail("n2, on a copy of the storage root, joined n1's cluster");
      }
      assertFalse(n2.alive(), "n2 stopped");
      String id = RootIdentity.read(new FileStorage(cluster.data)).orElseThrow().toString();
      assertEquals(id, RootIdentity.read(new FileStorage(copy)).orElseThrow().toString(), "the copy has the id");
      String refused = line(n2.tail(400), "tabula: the cluster");
      assertContains(refused, "refused this node at join", "n2 exits with why");
      assertContains(refused, copy.toString(), "n2's error names its own root");
      String refusal = line(n1.tail(2000), "Found incompatible settings");
      assertContains(refusal, copy + " (root id " + id + ")", "n1's refusal names n2's root");
      assertContains(refusal, cluster.data + " (root id " + id + ")", "n1's refusal names the cluster's root");
      assertContains(refusal, "a copy", "n1's refusal says what is wrong");
      assertContains(refusal, "docs/deploy.md", "and where to read about it");

      for (String[] owner : ClusterFixture.tablets(n1, "t").values()) {
        assertEquals("n1", owner[0], "no tablet left n1");
      }
      try (BigtableDataClient c = ClusterFixture.data(n1)) {
        write(c);
        assertEquals(KEYS, read(c), "n1 serves on");
      }
    }
  }

  /** Copies the folder {@code from} to {@code to} as {@code cp -a} would, skipping files that went meanwhile. */
  private static void copyTree(Path from, Path to) throws IOException {
    try (var files = Files.walk(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        try {
          if (Files.isDirectory(p)) {
            Files.createDirectories(target);
          } else {
            Files.copy(p, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
          }
        } catch (java.nio.file.NoSuchFileException gone) {
          // a file the running node deleted while it was copied
        }
      }
    }
  }

  private static void write(BigtableDataClient c) {
    for (String k : KEYS) {
      c.mutateRow(RowMutation.create(TableId.of("t"), k).setCell("f", "q", "v-" + k));
    }
  }

  /** Moves every tablet of "t" to node {@code to}, through {@code via}, and waits until each serves there. */
  private static void moveEvery(NodeJvm via, String to) throws Exception {
    for (String id : ClusterFixture.tablets(via, "t").keySet()) {
      var answer = via.post("/tabula/tablets/" + id + "/move?to=" + to);
      assertEquals(202, answer.statusCode(), answer.body());
      awaitServingAt(via, id, to);
    }
  }

  private static List<String> read(BigtableDataClient c) {
    List<String> keys = new ArrayList<>();
    for (Row r : c.readRows(Query.create(TableId.of("t")))) {
      keys.add(r.getKey().toStringUtf8());
    }
    return keys;
  }

  /** The first line of {@code log} that contains {@code part}. */
  private static String line(String log, String part) {
    return log.lines().filter(l -> l.contains(part)).findFirst()
        .orElseGet(() -> fail("no line with \"" + part + "\" in:\n" + log));
  }

  private static void assertContains(String text, String part, String what) {
    if (!text.contains(part)) {
      fail(what + ": no \"" + part + "\" in:\n" + text);
    }
  }

  /** Waits until {@code n} is ready (true) or its process has ended (false), up to 120 s. */
  private static boolean readyOrExited(NodeJvm n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (n.alive()) {
      try {
        if (n.get("/ready").statusCode() == 200) {
          return true;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      if (System.nanoTime() > deadline) {
        fail(n.name + " neither became ready nor stopped within 120 s; its log:\n" + n.tail(80));
      }
      Thread.sleep(200);
    }
    return false;
  }

  private static void awaitServingAt(NodeJvm via, String id, String to) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      String[] o = ClusterFixture.tablets(via, "t").get(id);
      if (o != null && o[0].equals(to) && o[1].equals("serving")) {
        return;
      }
      Thread.sleep(100);
    }
    fail("tablet " + id + " did not serve at " + to + " within 60 s");
  }
}
