package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.Compression;
import io.tabula.persistence.storage.FileStorage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * In-memory locality groups (paper §6) on a live tablet: a family in group "mem" has its
 * files in a set of their own; turning the group's in-memory setting on reopens those files
 * whole in memory, turning it off sends them back to the block cache, and reads see the same
 * cells throughout.
 */
class LocalityGroupTest {
  @TempDir
  Path dir;

  private TabletServer server;
  private final Queue<String> reported = new ConcurrentLinkedQueue<>();

  @AfterEach
  void stop() {
    if (server != null) {
      server.abandon();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static TableSchema schema(boolean inMemory) {
    return TableSchema.of(List.of(ColumnFamily.of("f"), new ColumnFamily("m", GcPolicy.KEEP_ALL, "mem")),
        List.of(new LocalityGroup("mem", 4096, Compression.NONE, 10, inMemory)));
  }

  private static boolean allInMemory(Tablet t, String group, boolean want) {
    List<SSTableHandle> fs = t.currentVersion().files(group);
    return !fs.isEmpty() && fs.stream().allMatch(h -> h.reader().inMemory() == want);
  }

  private static void await(String what, java.util.function.BooleanSupplier done) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 10 s: " + what);
      }
      Thread.sleep(10);
    }
  }

  @Test
  void aGroupTurnedInMemoryIsReopenedWholeAndReadsTheSame() throws Exception {
    AtomicReference<TableSchema> schema = new AtomicReference<>(schema(false));
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(1 << 20,
        Durability.FSYNC), TabletOptions.defaults());
    server = TabletServer.open(new FileStorage(dir), o, () -> 1_000_000L, t -> schema.get(),
        (what, e) -> reported.add(what + ": " + e));
    Tablet t = server.createTablet("tbl", "t1", new byte[0], new byte[0]);
    for (int i = 0; i < 200; i++) {
      String row = String.format("row%03d", i);
      t.apply(RowMutation.of(b(row), new Mutation.SetCell("f", b("q"), 1000, b("disk" + i)),
          new Mutation.SetCell("m", b("q"), 1000, b("mem" + i)))).join();
    }
    t.freezeAndFlush().join();
    assertEquals(1, t.currentVersion().files("mem").size(), "family m has a file of its own group");
    assertTrue(allInMemory(t, "mem", false));
    Row before = t.read(b("row077"), ReadFilter.all()).orElseThrow();

    t.updateSchema(schema(true));
    await("group mem read whole into memory", () -> allInMemory(t, "mem", true));
    assertTrue(allInMemory(t, LocalityGroup.DEFAULT_NAME, false), "the default group stays on disk");
    assertEquals(before.toString(), t.read(b("row077"), ReadFilter.all()).orElseThrow().toString());

    t.apply(RowMutation.of(b("row300"), new Mutation.SetCell("m", b("q"), 1000, b("late")))).join();
    t.freezeAndFlush().join();
    assertEquals(2, t.currentVersion().files("mem").size());
    assertTrue(allInMemory(t, "mem", true), "a file flushed into an in-memory group is opened in memory");

    t.updateSchema(schema(false));
    await("group mem back on disk", () -> allInMemory(t, "mem", false));
    assertEquals(before.toString(), t.read(b("row077"), ReadFilter.all()).orElseThrow().toString());
    assertEquals("late", new String(t.read(b("row300"), ReadFilter.all()).orElseThrow().cells().get(0).value(),
        StandardCharsets.UTF_8));
    assertFalse(reported.iterator().hasNext(), "no background failure: " + reported);
  }
}
