package io.tabula.persistence.sstable;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.storage.CorruptionException;

/**
 * The fixed-size footer at the end of every SSTable (docs/formats/sstable.md, "Footer"):
 *
 * <pre>
 *  0  u64 index offset      8  u32 index size
 * 12  u64 bloom offset     20  u32 bloom size
 * 24  u64 properties offset 32  u32 properties size
 * 36  u32 format version
 * 40  u32 crc32c of bytes [0, 40)
 * 44  u64 magic
 * 52  end
 * </pre>
 *
 * Sizes count a block's payload, not its trailer. Immutable.
 */
record Footer(long indexOffset, int indexSize, long bloomOffset, int bloomSize, long propertiesOffset,
    int propertiesSize) {

  static byte[] encode(Footer f) {
    byte[] b = new byte[SSTableFormat.FOOTER_SIZE];
    putHandle(b, SSTableFormat.FOOTER_INDEX_HANDLE, f.indexOffset, f.indexSize);
    putHandle(b, SSTableFormat.FOOTER_BLOOM_HANDLE, f.bloomOffset, f.bloomSize);
    putHandle(b, SSTableFormat.FOOTER_PROPERTIES_HANDLE, f.propertiesOffset, f.propertiesSize);
    ByteSink.putIntAt(b, SSTableFormat.FOOTER_VERSION, SSTableFormat.FORMAT_VERSION);
    ByteSink.putIntAt(b, SSTableFormat.FOOTER_CRC, BlockCodec.crc(b, 0, SSTableFormat.FOOTER_CRC));
    ByteSink.putLongAt(b, SSTableFormat.FOOTER_MAGIC, SSTableFormat.MAGIC);
    return b;
  }

  /**
   * Checks magic, version and CRC of the footer in {@code b[off, off + FOOTER_SIZE)} that
   * starts at {@code fileOffset}, and that every handle lies before it.
   */
  static Footer decode(byte[] b, int off, String file, long fileOffset) throws CorruptionException {
    long magic = ByteSink.getLongAt(b, off + SSTableFormat.FOOTER_MAGIC);
    if (magic != SSTableFormat.MAGIC) {
      throw new CorruptionException(file, fileOffset, String.format(
          "bad magic %016x (expected %016x): not an SSTable, or truncated", magic, SSTableFormat.MAGIC));
    }
    int version = ByteSink.getIntAt(b, off + SSTableFormat.FOOTER_VERSION);
    if (version != SSTableFormat.FORMAT_VERSION) {
      throw new CorruptionException(file, fileOffset, "unknown SSTable format version " + version);
    }
    int expected = ByteSink.getIntAt(b, off + SSTableFormat.FOOTER_CRC);
    int actual = BlockCodec.crc(b, off, SSTableFormat.FOOTER_CRC);
    if (expected != actual) {
      throw new CorruptionException(file, fileOffset, String.format(
          "footer checksum mismatch: stored %08x, computed %08x", expected, actual));
    }
    Footer f = new Footer(
        ByteSink.getLongAt(b, off + SSTableFormat.FOOTER_INDEX_HANDLE + SSTableFormat.HANDLE_OFFSET),
        ByteSink.getIntAt(b, off + SSTableFormat.FOOTER_INDEX_HANDLE + SSTableFormat.HANDLE_SIZE_FIELD),
        ByteSink.getLongAt(b, off + SSTableFormat.FOOTER_BLOOM_HANDLE + SSTableFormat.HANDLE_OFFSET),
        ByteSink.getIntAt(b, off + SSTableFormat.FOOTER_BLOOM_HANDLE + SSTableFormat.HANDLE_SIZE_FIELD),
        ByteSink.getLongAt(b, off + SSTableFormat.FOOTER_PROPERTIES_HANDLE + SSTableFormat.HANDLE_OFFSET),
        ByteSink.getIntAt(b, off + SSTableFormat.FOOTER_PROPERTIES_HANDLE + SSTableFormat.HANDLE_SIZE_FIELD));
    // The writer lays out bloom, properties, index, footer back to back.
    long bloomEnd = end(f.bloomOffset, f.bloomSize);
    long propsEnd = end(f.propertiesOffset, f.propertiesSize);
    long indexEnd = end(f.indexOffset, f.indexSize);
    if (f.bloomOffset < 0 || f.bloomSize < 0 || f.propertiesSize < 0 || f.indexSize < 0
        || f.propertiesOffset != bloomEnd || f.indexOffset != propsEnd || indexEnd != fileOffset) {
      throw new CorruptionException(file, fileOffset, "footer handles " + f + " do not tile the file before the footer");
    }
    return f;
  }

  private static long end(long offset, int size) {
    return offset + (size & 0xFFFFFFFFL) + SSTableFormat.BLOCK_TRAILER_SIZE;
  }

  private static void putHandle(byte[] b, int at, long offset, int size) {
    ByteSink.putLongAt(b, at + SSTableFormat.HANDLE_OFFSET, offset);
    ByteSink.putIntAt(b, at + SSTableFormat.HANDLE_SIZE_FIELD, size);
  }
}
