package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.compaction.CompactionMerger;
import io.tabula.persistence.compaction.TabletTokensWindow;
import io.tabula.persistence.memtable.Memtable;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.model.InvalidMutationException;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idempotency tokens: written with their row mutation, found again from the memtable, from
 * SSTables and after a replay of the log, never read as cells, and forgotten (then dropped by
 * compactions) once older than the window.
 */
class TabletTokensTest {
  private static final TableSchema SCHEMA = TableSchema.of(List.of(
      new ColumnFamily("sum", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, Aggregator.SUM),
      new ColumnFamily("other", GcPolicy.KEEP_ALL, "elsewhere")),
      List.of(LocalityGroup.defaults("elsewhere")));

  @TempDir
  Path dir;

  private final AtomicLong now = new AtomicLong(1_700_000_000_000_000L);
  private TabletServer server;

  private TabletServer open() throws IOException {
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(1 << 20,
        Durability.FSYNC), TabletOptions.defaults().withMemtableBytes(1 << 20));
    server = TabletServer.open(new FileStorage(dir), o, now::get, t -> SCHEMA, (what, e) -> { });
    return server;
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.abandon();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static RowMutation counted(String row, String token) {
    return new RowMutation(b(row), List.of(new Mutation.AddToCell("sum", b("q"), 1000, 1),
        new Mutation.Token(b(token), Mutation.SERVER_TIME)));
  }

  @Test
  void aTokenIsFoundFromTheMemtableFilesAndTheLogUntilItIsTooOld() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    assertFalse(TabletTokens.seen(t, b("r"), b("token-0001")));
    t.apply(counted("r", "token-0001")).join();
    assertTrue(TabletTokens.seen(t, b("r"), b("token-0001")), "from the memtable");
    assertFalse(TabletTokens.seen(t, b("r"), b("token-0002")), "another token");
    assertFalse(TabletTokens.seen(t, b("s"), b("token-0001")), "the same token in another row");
    t.apply(counted("s", "token-0002")).join();
    t.freezeAndFlush().join();
    assertTrue(TabletTokens.seen(t, b("r"), b("token-0001")), "from an SSTable");
    t.apply(counted("r", "token-0003")).join();
    server.abandon(); // no flush: token-0003 is only in the log
    t = open().tablet("t1");
    assertTrue(TabletTokens.seen(t, b("r"), b("token-0003")), "after a replay of the log");
    t.majorCompact().join();
    assertTrue(TabletTokens.seen(t, b("r"), b("token-0001")), "a young token outlives a major compaction");
    assertEquals(1, t.read(b("r"), ReadFilter.all()).map(Row::cells).orElseThrow().size(),
        "a token is never read as a cell");
    now.addAndGet(TabletTokensWindow.MICROS + 1);
    assertFalse(TabletTokens.seen(t, b("r"), b("token-0001")), "older than the window");
  }

  @Test
  void aRowWithOnlyATokenReadsAsNoRow() throws IOException {
    Tablet t = open().createTablet("tbl", "t1", new byte[0], new byte[0]);
    t.apply(new RowMutation(b("r"), List.of(new Mutation.MergeToCell("sum", b("q"), 1000, null),
        new Mutation.Token(b("token-0001"), Mutation.SERVER_TIME)))).join();
    assertTrue(TabletTokens.seen(t, b("r"), b("token-0001")), "a retried no-op is remembered too");
    assertEquals(List.of(), rows(t));
    t.freezeAndFlush().join();
    assertEquals(List.of(), rows(t));
  }

  @Test
  void tokensOutsideTheirSizeAreRefused() {
    InvalidMutationException e = assertThrows(InvalidMutationException.class, () -> counted("r", "short"));
    assertEquals("idempotency.token", e.field());
  }

  @Test
  void compactionsKeepTokensForTheWindowOnly() throws IOException {
    Memtable m = new Memtable();
    long at = now.get();
    m.add(CellKey.of(b("r"), new byte[0], b("old-token"), at - TabletTokensWindow.MICROS, 1, CellKind.TOKEN),
        new byte[0]);
    m.add(CellKey.of(b("r"), new byte[0], b("young-token"), at - 1, 2, CellKind.TOKEN), new byte[0]);
    m.add(CellKey.of(b("r"), b("sum"), b("q"), 1000, 3, CellKind.MERGE), new byte[8]);
    List<String> kept = new ArrayList<>();
    var it = m.iterator();
    it.seek(CellKey.firstOfRow(b("r")));
    CompactionMerger.merge(it, (k, v) -> kept.add(k.kind() + " " + new String(k.qualifier(), StandardCharsets.UTF_8)),
        SCHEMA::gcPolicy, SCHEMA::aggregator, at, true);
    assertEquals(List.of("TOKEN young-token", "MERGE q"), kept);
  }

  private static List<String> rows(Tablet t) throws IOException {
    List<String> out = new ArrayList<>();
    try (RowScanner s = t.scan(new byte[0], new byte[0], ReadFilter.all())) {
      for (Row r = s.next(); r != null; r = s.next()) {
        out.add(new String(r.key(), StandardCharsets.UTF_8));
      }
    }
    return out;
  }
}
