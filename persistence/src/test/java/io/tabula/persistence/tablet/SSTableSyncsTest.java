package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.ForwardingWritableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TabletOptions#sstableSyncEveryBytes}: a flush syncs the SSTable it writes as it goes
 * when set, and only at its end when not. The files are real; the syncs are counted on their
 * way to them.
 */
class SSTableSyncsTest {
  @TempDir
  Path dir;

  /** Real storage that counts the syncs of every file created through it, by path. */
  private static final class CountingStorage extends ForwardingStorage {
    final Map<String, AtomicInteger> syncs = new ConcurrentHashMap<>();

    CountingStorage(Storage delegate) {
      super(delegate);
    }

    @Override
    public WritableFile create(String path) throws IOException {
      AtomicInteger n = syncs.computeIfAbsent(path, p -> new AtomicInteger());
      return new ForwardingWritableFile(delegate.create(path)) {
        @Override
        public void sync() throws IOException {
          super.sync();
          n.incrementAndGet();
        }
      };
    }

    /** The syncs of the one SSTable written so far. */
    int sstableSyncs() {
      List<Map.Entry<String, AtomicInteger>> ssts = syncs.entrySet().stream()
          .filter(e -> e.getKey().endsWith(".sst")).toList();
      assertEquals(1, ssts.size(), "one SSTable: " + syncs.keySet());
      return ssts.get(0).getValue().get();
    }
  }

  private static int flushOf200KiB(Path dir, long syncEvery) throws Exception {
    CountingStorage storage = new CountingStorage(new FileStorage(dir));
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(1 << 20,
        Durability.OS_BUFFERED), TabletOptions.defaults().withSstableSyncEveryBytes(syncEvery));
    TabletServer server = TabletServer.open(storage, o, () -> 1_000_000L,
        t -> TableSchema.of(List.of(ColumnFamily.of("f")), List.of()), (what, e) -> {
          throw new AssertionError(what, e);
        });
    try {
      Tablet t = server.createTablet("tbl", "t1", new byte[0], new byte[0]);
      byte[] value = new byte[1000];
      for (int i = 0; i < 200; i++) {
        value[0] = (byte) i;
        t.apply(RowMutation.of(String.format("row%03d", i).getBytes(StandardCharsets.UTF_8),
            new Mutation.SetCell("f", new byte[] {'q'}, 1000, value.clone()))).join();
      }
      t.freezeAndFlush().join();
      assertEquals(1, t.currentVersion().files("default").size());
      assertEquals(77, t.read("row077".getBytes(StandardCharsets.UTF_8), ReadFilter.all()).orElseThrow()
          .cells().get(0).value()[0], "the flushed file reads back");
      return storage.sstableSyncs();
    } finally {
      server.abandon();
    }
  }

  @Test
  void aFlushSyncsItsFileEveryGivenBytesWhenSet() throws Exception {
    int syncs = flushOf200KiB(dir.resolve("paced"), 16 * 1024);
    // About 200 KiB of values: a sync every 16 KiB is a dozen, and one at the end.
    assertTrue(syncs >= 10 && syncs <= 16, "syncs of the flushed file: " + syncs);
  }

  @Test
  void aFlushSyncsItsFileOnceAtItsEndByDefault() throws Exception {
    assertEquals(1, flushOf200KiB(dir.resolve("plain"), TabletOptions.defaults().sstableSyncEveryBytes()));
  }
}
