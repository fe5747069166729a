package io.tabula.persistence.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Syncs every so many bytes, on real files; the syncs are counted on their way to the file. */
class SyncEveryTest {
  @TempDir
  Path dir;

  /** A real file that records the position of every sync that reaches it. */
  private static final class Counted extends ForwardingWritableFile {
    final List<Long> syncsAt = new ArrayList<>();

    Counted(WritableFile delegate) {
      super(delegate);
    }

    @Override
    public void sync() throws IOException {
      super.sync();
      syncsAt.add(position());
    }
  }

  @Test
  void syncsEachTimeTheGivenBytesMoreWereAppended() throws IOException {
    Storage storage = new FileStorage(dir);
    Counted file = new Counted(storage.createNew("t/000001.sst"));
    WritableFile paced = SyncEvery.wrap(file, 1000);
    byte[] chunk = new byte[300];
    for (int i = 0; i < 10; i++) {
      chunk[0] = (byte) i;
      paced.append(chunk);
    }
    // 1200 >= 1000: synced; 2400 - 1200 >= 1000: synced; then 3000 - 2400 < 1000.
    assertEquals(List.of(1200L, 2400L), file.syncsAt);
    paced.sync();
    paced.append(new byte[999]);
    assertEquals(List.of(1200L, 2400L, 3000L), file.syncsAt, "the writer's own sync starts the count again");
    paced.append(new byte[1]);
    assertEquals(List.of(1200L, 2400L, 3000L, 4000L), file.syncsAt);
    paced.close();
    byte[] written = Files.readAllBytes(dir.resolve("t/000001.sst"));
    assertEquals(4000, written.length);
    assertEquals(9, written[2700]);
  }

  @Test
  void aTruncateMovesTheCountBack() throws IOException {
    Counted file = new Counted(new FileStorage(dir).createNew("t/000002.sst"));
    WritableFile paced = SyncEvery.wrap(file, 1000);
    paced.append(new byte[1500]);
    paced.truncate(200);
    paced.append(new byte[900]);
    assertEquals(List.of(1500L), file.syncsAt, "the count restarts at the cut: 900 bytes since it");
    paced.append(new byte[100]);
    assertEquals(List.of(1500L, 1200L), file.syncsAt);
    paced.close();
  }

  @Test
  void zeroIsTheFileItselfAndANegativeSizeIsRefused() throws IOException {
    WritableFile f = new FileStorage(dir).createNew("t/000003.sst");
    assertSame(f, SyncEvery.wrap(f, 0));
    assertThrows(IllegalArgumentException.class, () -> SyncEvery.wrap(f, -1));
    f.append(new byte[] {1, 2, 3});
    f.close();
    assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(dir.resolve("t/000003.sst")));
  }
}
