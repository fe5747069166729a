package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crashes in a row lose no acknowledged write. A replay of the log starts with every sequence
 * up to the manifest's last one counted visible; a memtable that filled during the replay once
 * took that visible sequence as its redo point, though records below it were still to be
 * replayed into a newer memtable, and its flush moved the manifest's redo point past them: a
 * second crash before the newer memtable's flush then skipped them at the next replay. Small
 * memtables and a crash every fifty writes or so make such replays frequent.
 */
class ReplayRedoTest {
  @TempDir
  Path dir;
  private final AtomicLong clock = new AtomicLong(1_700_000_000_000_000L);

  private TabletServer open() throws IOException {
    TabletServer.Options o = new TabletServer.Options("n1", 1 << 20, 1, new CommitLogOptions(1 << 20,
        Durability.FSYNC), TabletOptions.defaults().withMemtableBytes(2048));
    return TabletServer.open(new FileStorage(dir), o, clock::get, t -> TableSchema.of(ColumnFamily.of("f")),
        (what, e) -> { });
  }

  @Test
  void crashesInARowDuringReplaysLoseNoAcknowledgedWrite() throws Exception {
    int lost = 0;
    for (int round = 0; round < 8; round++) {
      TabletServer s = open();
      Tablet t = s.tablet("t1") != null ? s.tablet("t1") : s.createTablet("tbl", "t1", new byte[0], new byte[0]);
      Random rnd = new Random(round);
      for (int i = 0; i < 1500; i++) {
        clock.addAndGet(1000);
        t.apply(RowMutation.of(("row" + round + "-" + i).getBytes(), new Mutation.SetCell("f", "q".getBytes(),
            Mutation.SERVER_TIME, ("v" + "x".repeat(rnd.nextInt(200))).getBytes()))).join();
        int what = rnd.nextInt(100);
        if (what < 2) {
          long before = t.redoPoint(), vis = t.visibleSequence();
          s.abandon();
          s = open();
          t = s.tablet("t1");
          System.err.println("DBG round " + round + " crash at " + i + " redo " + before + " visible " + vis + " -> reopened redo " + t.redoPoint() + " visible " + t.visibleSequence());
        } else if (what < 4) {
          t.freezeAndFlush().join();
          System.err.println("DBG round " + round + " flush at " + i + " redo " + t.redoPoint());
        }
      }
      for (int i = 0; i < 1500; i++) {
        if (t.read(("row" + round + "-" + i).getBytes(StandardCharsets.UTF_8), ReadFilter.all()).isEmpty()) {
          lost++;
          if (lost <= 5) {
            System.err.println("lost acknowledged row " + round + "-" + i);
          }
        }
      }
      s.abandon();
    }
    assertEquals(0, lost, "acknowledged writes lost");
  }
}
