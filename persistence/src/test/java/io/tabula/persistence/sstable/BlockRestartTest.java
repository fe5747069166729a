package io.tabula.persistence.sstable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.CellKeyCodec;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.storage.CorruptionException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Restart points come every {@code restartInterval} entries, or sooner after about 2 KiB. */
class BlockRestartTest {
  private static CellKey key(int i) {
    return CellKey.put(String.format("row%05d", i).getBytes(StandardCharsets.UTF_8), new byte[] {'f'},
        new byte[] {'q'}, 1000, i);
  }

  private static int restarts(byte[] block) {
    return ByteSink.getIntAt(block, block.length - SSTableFormat.RESTART_COUNT_SIZE);
  }

  private static byte[] block(int entries, int valueBytes) {
    BlockBuilder b = new BlockBuilder(16, 1 << 16);
    for (int i = 0; i < entries; i++) {
      byte[] v = new byte[valueBytes];
      v[0] = (byte) i;
      b.add(CellKeyCodec.encode(key(i)), v);
    }
    return b.finish();
  }

  @Test
  void smallEntriesRestartByCount() {
    assertEquals(4, restarts(block(64, 10)), "64 small entries, a restart every 16");
  }

  @Test
  void largeEntriesRestartByBytesAndEveryKeyIsFound() throws CorruptionException {
    byte[] data = block(16, 1000);
    // Each entry is a little over 1,000 bytes: the third entry starts past 2 KiB, and so on.
    assertEquals(8, restarts(data), "16 entries of 1000-byte values, a restart every second entry");
    Block block = Block.parse(data, 0, data.length, "test", 0);
    for (int i = 0; i < 16; i++) {
      Block.Cursor c = block.cursor();
      c.seek(key(i));
      assertTrue(c.valid(), "entry " + i);
      assertEquals(0, CellKey.compare(key(i), c.key()), "entry " + i);
      assertEquals((byte) i, c.value()[0]);
    }
    Block.Cursor c = block.cursor();
    c.seek(key(16));
    assertTrue(!c.valid(), "past the last entry");
    c = block.cursor();
    c.seekToFirst();
    for (int i = 0; i < 16; i++, c.advance()) {
      assertArrayEquals(key(i).row(), c.key().row(), "entry " + i + " in order");
    }
  }
}
