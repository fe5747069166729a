package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.wal.CommitLog;
import io.tabula.persistence.wal.LogFencedException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a node's engine does once another node fenced its commit log (docs/fencing.md): it
 * answers no read, takes no write, commits no manifest change, and closes without flushing,
 * so the node that recovers its tablets from the log finds the files as the fence left them.
 * The other node is a second storage over the same root, as a second process would be.
 */
class FencedServerTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));

  @TempDir
  Path root;

  private static RowMutation put(String row) {
    return RowMutation.of(row.getBytes(StandardCharsets.UTF_8), new Mutation.SetCell("f",
        "q".getBytes(StandardCharsets.UTF_8), 1000, new byte[100]));
  }

  @Test
  void aFencedServerReadsWritesAndFlushesNothingAndRecoveryFindsEveryAcknowledgedWrite() throws Exception {
    List<String> failures = new ArrayList<>();
    TabletServer server = TabletServer.open(new FileStorage(root), TabletServer.Options.defaults("n1"),
        () -> 5_000_000L, t -> SCHEMA, (what, e) -> failures.add(what + ": " + e));
    Tablet t = server.createTablet("tbl", "t1", new byte[0], new byte[0]);
    for (int i = 0; i < 50; i++) {
      t.apply(put("r" + i)).join();
    }
    t.checkNotFenced();
    assertTrue(t.read("r1".getBytes(StandardCharsets.UTF_8), ReadFilter.all()).isPresent());

    Storage other = new FileStorage(root);
    other.fence("logs/n1");

    assertThrows(TabletUnavailableException.class, t::checkNotFenced, "no read answers once fenced");
    assertThrows(TabletUnavailableException.class, () -> t.scan(new byte[0], new byte[0], ReadFilter.all()),
        "no scan starts once fenced");
    CompletionException write = assertThrows(CompletionException.class, () -> t.apply(put("late")).join());
    assertTrue(LogFencedException.in(write), write.toString());
    CompletionException flush = assertThrows(CompletionException.class, () -> t.freezeAndFlush().join());
    assertTrue(LogFencedException.in(flush), "no manifest change once fenced: " + flush);
    assertTrue(server.whenLogLost().isDone());
    Map<String, List<String>> filesBefore = t.files();
    assertThrows(TabletUnavailableException.class, () -> server.closeTablet("t1"),
        "a hand-over does not report a clean close: the writes are only in the log");
    server.close(); // abandons: no flush
    assertEquals(Map.of(), filesBefore.entrySet().stream().filter(e -> !e.getValue().isEmpty())
        .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)),
        "no SSTable was written by the fenced server");

    List<String> rows = new ArrayList<>();
    CommitLog.readFolder(other, "logs/n1", (id, seq, payload) -> rows.add(id));
    // The 50 acknowledged writes, and the late one whose group found the fence after its fsync:
    // its outcome was never acknowledged, so recovery may replay it or not.
    assertEquals(51, rows.stream().filter("t1"::equals).count(), "every acknowledged write is in the log");
  }

  @Test
  void anAbandonedServerClosesNoTabletCleanly() throws Exception {
    TabletServer server = TabletServer.open(new FileStorage(root), TabletServer.Options.defaults("n1"),
        () -> 5_000_000L, t -> SCHEMA, (what, e) -> { });
    Tablet t = server.createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(put("r1")).join();
    server.abandon();
    // Its actor, stopping for a hand-over, must not tell the master the log is no longer needed.
    assertThrows(TabletUnavailableException.class, () -> server.closeTablet("t1"));
    List<String> rows = new ArrayList<>();
    CommitLog.readFolder(new FileStorage(root), "logs/n1", (id, seq, payload) -> rows.add(id));
    assertEquals(List.of("t1"), rows, "the write is in the log, and only there");
    assertEquals(List.of(), new FileStorage(root).list("tables/tbl/t1").stream().filter(f -> f.endsWith(".sst"))
        .toList(), "nothing was flushed");
  }

  /**
   * The window between a flush's fence check and its manifest write: the old owner passed the
   * check, then froze; the new owner opened the tablet (claiming a manifest version) and
   * flushed. When the old owner resumes, its manifest change is refused, typed, and the new
   * owner's manifest and rows stand.
   */
  @Test
  void anOldOwnersLateManifestChangeIsRefusedOnceANewOwnerOpenedTheTablet() throws Exception {
    TabletServer old = TabletServer.open(new FileStorage(root), TabletServer.Options.defaults("n1"),
        () -> 5_000_000L, t -> SCHEMA, (what, e) -> { });
    Tablet stale = old.createTablet("tbl", "t1", new byte[0], new byte[0]);
    stale.apply(put("before")).join();
    stale.freezeAndFlush().join();
    stale.apply(put("old-owner-late")).join();

    // The new owner opens it (here without fencing n1's log: the old owner is past its check).
    TabletServer fresh = TabletServer.startOnDemand(new FileStorage(root), TabletServer.Options.defaults("n2"),
        () -> 6_000_000L, t -> SCHEMA, (what, e) -> { });
    Tablet owned = fresh.openTablet("tbl", "t1", new byte[0], new byte[0], List.of("n1")).tablet();
    owned.apply(put("new-owner")).join();
    owned.freezeAndFlush().join();
    Map<String, List<String>> ownersFiles = owned.files();

    CompletionException late = assertThrows(CompletionException.class, () -> stale.freezeAndFlush().join());
    assertTrue(hasCause(late, ManifestConflictException.class), "refused, typed: " + late);
    fresh.close();
    old.abandon();

    TabletServer reader = TabletServer.startOnDemand(new FileStorage(root), TabletServer.Options.defaults("n3"),
        () -> 7_000_000L, t -> SCHEMA, (what, e) -> { });
    try {
      Tablet t = reader.openTablet("tbl", "t1", new byte[0], new byte[0], List.of()).tablet();
      assertEquals(ownersFiles, t.files(), "the new owner's manifest stands");
      assertTrue(t.read("new-owner".getBytes(StandardCharsets.UTF_8), ReadFilter.all()).isPresent());
      assertTrue(t.read("before".getBytes(StandardCharsets.UTF_8), ReadFilter.all()).isPresent());
    } finally {
      reader.close();
    }
  }

  private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return true;
      }
    }
    return false;
  }
}
