package io.tabula.persistence.tablet;

import io.tabula.persistence.compaction.CompactionMerger;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.SSTableReader;
import io.tabula.persistence.sstable.SSTableWriter;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.SyncEvery;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Writing a compaction's output to a new SSTable, and opening SSTables, for a tablet. */
final class SSTableFiles {
  private SSTableFiles() {}

  /**
   * Runs {@link CompactionMerger} over {@code in} (positioned on its first entry) into a new
   * file at {@code path}. Returns the opened, owned handle, or null if nothing survived (then
   * no file is left behind).
   */
  static SSTableHandle write(TabletEnv env, String path, LocalityGroup group, TableSchema schema, CellIterator in,
      boolean major) throws IOException {
    SSTableWriter[] writer = new SSTableWriter[1];
    try {
      CompactionMerger.merge(in, (CellKey k, byte[] v) -> {
        if (writer[0] == null) {
          writer[0] = new SSTableWriter(SyncEvery.wrap(env.storage().createNew(path),
              env.options().sstableSyncEveryBytes()), group.sstableOptions());
        }
        writer[0].add(k, v);
      }, schema::gcPolicy, schema::aggregator, env.clock().nowMicros(), major);
      if (writer[0] == null) {
        return null;
      }
      writer[0].finish();
      writer[0] = null;
    } finally {
      if (writer[0] != null) {
        writer[0].close();
        env.storage().delete(path);
      }
    }
    return open(env, path, true, group.inMemory());
  }

  /**
   * Opens every SSTable manifest {@code m} names, by locality group (newest first), each read
   * whole into memory if {@code schema} says so for its group. If one fails to open, those
   * already opened are closed again (their files kept).
   */
  static Map<String, List<SSTableHandle>> openAll(TabletEnv env, TableSchema schema, TabletManifest m)
      throws IOException {
    Map<String, List<SSTableHandle>> files = new HashMap<>();
    List<SSTableHandle> opened = new ArrayList<>();
    try {
      for (Map.Entry<String, List<TabletManifest.FileRef>> g : m.groups().entrySet()) {
        boolean inMemory = schema.inMemory(g.getKey());
        List<SSTableHandle> handles = new ArrayList<>();
        for (TabletManifest.FileRef f : g.getValue()) {
          SSTableHandle h = open(env, f.path(), f.owned(), inMemory);
          opened.add(h);
          handles.add(h);
        }
        files.put(g.getKey(), handles);
      }
    } catch (IOException | RuntimeException e) {
      opened.forEach(h -> h.discard(false));
      throw e;
    }
    return files;
  }

  static SSTableHandle open(TabletEnv env, String path, boolean owned, boolean inMemory) throws IOException {
    ReadableFile f = env.storage().open(path);
    try {
      return new SSTableHandle(env.storage(), path, owned, SSTableReader.open(f, env.cache(), inMemory),
          env.failures(), env.scanCache());
    } catch (IOException | RuntimeException e) {
      f.close();
      throw e;
    }
  }
}
