package io.tabula.persistence.sstable;

import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.encoding.VarInts;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * An open SSTable (format: {@link SSTableWriter}, docs/formats/sstable.md).
 *
 * <p>{@link #open} checks the footer (magic, version, CRC) and reads the index, bloom and
 * properties blocks, which stay in memory. Data blocks are read one at a time as iterators
 * reach them: through the shared {@link BlockCache} (or straight from the file if the cache
 * is null), or, for an in-memory table (paper §6 in-memory locality groups), from an image
 * of the whole file read once at open. Every block's CRC is checked before its bytes are
 * used; damage is a {@link CorruptionException} naming the file and the offset of the bad
 * block or footer, and no data from it is returned.
 *
 * <p>Ownership: on success the reader owns {@code file} and closes it in {@link #close()},
 * which also drops the file's blocks from the cache; if {@code open} throws, the caller
 * still owns the file. Thread-safe; each iterator is single-threaded and must not be used
 * after the reader is closed.
 */
public final class SSTableReader implements Closeable {
  private static final int MAX_IMAGE_BYTES = Integer.MAX_VALUE - 64;

  private final ReadableFile file;
  private final BlockCache cache;
  private final long fileId;
  private final byte[] image;
  private final AtomicReferenceArray<Block> imageBlocks;
  private final CellKey[] lastKeys;
  private final long[] blockOffsets;
  private final int[] blockSizes;
  private final BloomFilter bloom;
  private final TableProperties properties;
  private final SSTableInfo info;

  private SSTableReader(ReadableFile file, BlockCache cache, byte[] image, Index index, BloomFilter bloom,
      TableProperties properties) {
    this.file = file;
    this.cache = cache;
    this.fileId = cache == null ? 0 : cache.newFileId();
    this.image = image;
    this.imageBlocks = image == null ? null : new AtomicReferenceArray<>(index.lastKeys.length);
    this.lastKeys = index.lastKeys;
    this.blockOffsets = index.offsets;
    this.blockSizes = index.sizes;
    this.bloom = bloom;
    this.properties = properties;
    this.info = new SSTableInfo(properties.entries(), file.size(), properties.firstRow(), properties.lastRow(),
        properties.maxSequence(), properties.minSequence(), properties.tombstones());
  }

  /**
   * Opens an SSTable.
   *
   * @param cache where data blocks are cached; null to read each block from the file
   * @param inMemory read the whole file now and serve every block from memory
   * @throws CorruptionException if the footer or a meta block is damaged, or the file is truncated
   */
  public static SSTableReader open(ReadableFile file, BlockCache cache, boolean inMemory) throws IOException {
    String path = file.path();
    long size = file.size();
    if (size < SSTableFormat.FOOTER_SIZE) {
      throw new CorruptionException(path, 0, "file of " + size + " bytes is shorter than the "
          + SSTableFormat.FOOTER_SIZE + "-byte footer: truncated, or not an SSTable");
    }
    byte[] image = null;
    if (inMemory) {
      if (size > MAX_IMAGE_BYTES) {
        throw new IOException(path + " is " + size + " bytes, too large to hold in memory");
      }
      image = file.readFully(0, (int) size);
    }
    long footerOffset = size - SSTableFormat.FOOTER_SIZE;
    Footer footer = image != null
        ? Footer.decode(image, (int) footerOffset, path, footerOffset)
        : Footer.decode(file.readFully(footerOffset, SSTableFormat.FOOTER_SIZE), 0, path, footerOffset);

    BlockCodec.Raw bloomRaw = readStored(file, image, footer.bloomOffset(), footer.bloomSize());
    BloomFilter bloom = BloomFilter.parse(bloomRaw.array(), bloomRaw.offset(), bloomRaw.length(), path,
        footer.bloomOffset());
    BlockCodec.Raw propsRaw = readStored(file, image, footer.propertiesOffset(), footer.propertiesSize());
    TableProperties props = TableProperties.decode(propsRaw.array(), propsRaw.offset(), propsRaw.length(), path,
        footer.propertiesOffset());
    BlockCodec.Raw indexRaw = readStored(file, image, footer.indexOffset(), footer.indexSize());
    Block indexBlock = Block.parse(indexRaw.array(), indexRaw.offset(), indexRaw.length(), path,
        footer.indexOffset());
    Index index = Index.read(indexBlock, path, footer.indexOffset(), footer.bloomOffset());
    if (props.dataBlocks() != index.lastKeys.length) {
      throw new CorruptionException(path, footer.propertiesOffset(), "properties count " + props.dataBlocks()
          + " data blocks, the index " + index.lastKeys.length);
    }
    return new SSTableReader(file, cache, image, index, bloom, props);
  }

  private static BlockCodec.Raw readStored(ReadableFile file, byte[] image, long offset, int size)
      throws IOException {
    if (image != null) {
      return BlockCodec.decode(image, (int) offset, size, file.path(), offset);
    }
    byte[] stored = file.readFully(offset, size + SSTableFormat.BLOCK_TRAILER_SIZE);
    return BlockCodec.decode(stored, 0, size, file.path(), offset);
  }

  /** The index, decoded: data block i holds keys up to lastKeys[i] and sits at offsets[i]. */
  private record Index(CellKey[] lastKeys, long[] offsets, int[] sizes) {
    static Index read(Block block, String path, long indexOffset, long dataEnd) throws CorruptionException {
      List<CellKey> keys = new ArrayList<>();
      List<long[]> handles = new ArrayList<>();
      Block.Cursor c = block.cursor();
      long expectedOffset = 0;
      for (c.seekToFirst(); c.valid(); c.advance()) {
        ByteBuffer v = ByteBuffer.wrap(c.value());
        long offset;
        long size;
        try {
          offset = VarInts.getVarLong(v);
          size = VarInts.getVarLong(v);
        } catch (IllegalArgumentException e) {
          throw new CorruptionException(path, indexOffset, "bad block handle in index: " + e.getMessage());
        }
        if (v.hasRemaining() || offset != expectedOffset || size < 0 || size > Integer.MAX_VALUE - 64
            || (!keys.isEmpty() && CellKey.ORDER.compare(keys.get(keys.size() - 1), c.key()) >= 0)) {
          throw new CorruptionException(path, indexOffset, "index entry " + keys.size() + " (offset " + offset
              + ", size " + size + ", key " + c.key() + ") is out of order or does not follow the previous block");
        }
        keys.add(c.key());
        handles.add(new long[] {offset, size});
        expectedOffset = offset + size + SSTableFormat.BLOCK_TRAILER_SIZE;
      }
      if (expectedOffset != dataEnd) {
        throw new CorruptionException(path, indexOffset, "data blocks end at " + expectedOffset
            + " but the bloom block starts at " + dataEnd);
      }
      long[] offsets = new long[keys.size()];
      int[] sizes = new int[keys.size()];
      for (int i = 0; i < offsets.length; i++) {
        offsets[i] = handles.get(i)[0];
        sizes[i] = (int) handles.get(i)[1];
      }
      return new Index(keys.toArray(new CellKey[0]), offsets, sizes);
    }
  }

  public SSTableInfo info() {
    return info;
  }

  /**
   * What the scan cache may key this file's rows by: the id it has in the block cache, never
   * another file's; 0 when it has none (no block cache) or when its blocks are in memory
   * anyway (an in-memory group's file), and then its rows are not worth caching.
   */
  public long scanCacheId() {
    return image != null ? 0 : fileId;
  }

  public String path() {
    return file.path();
  }

  /**
   * One sample per data block: the row of the block's last key and the block's stored size,
   * in key order (for split points and SampleRowKeys; costs no I/O, the index is in memory).
   */
  public void forEachBlockSample(BlockSampleVisitor visitor) {
    for (int i = 0; i < lastKeys.length; i++) {
      visitor.visit(lastKeys[i].row(), blockSizes[i]);
    }
  }

  /** Receives {@link #forEachBlockSample} samples. */
  @FunctionalInterface
  public interface BlockSampleVisitor {
    void visit(byte[] lastRow, int blockBytes);
  }

  /** Whether the whole file is held in memory (opened for an in-memory locality group). */
  public boolean inMemory() {
    return image != null;
  }

  /** Whether the file was written with a bloom filter. */
  public boolean hasBloomFilter() {
    return bloom.present();
  }

  /** False only if no entry of {@code row} is in the file. */
  public boolean mayContainRow(byte[] row) {
    return inRowRange(row) && bloom.mayContain(BloomFilter.rowHash(row));
  }

  /**
   * False only if the file has no entry that can matter to a read of this column: no cell
   * or column tombstone of it, and no tombstone of its family or row.
   */
  public boolean mayContainColumn(byte[] row, byte[] family, byte[] qualifier) {
    if (!inRowRange(row)) {
      return false;
    }
    if (!bloom.present()) {
      return true;
    }
    if (properties.rowTombstones() > 0 && bloom.mayContain(BloomFilter.rowTombstoneHash(row))) {
      return true;
    }
    if (properties.familyTombstones() > 0 && bloom.mayContain(BloomFilter.familyTombstoneHash(row, family))) {
      return true;
    }
    return bloom.mayContain(BloomFilter.columnHash(row, family, qualifier));
  }

  private boolean inRowRange(byte[] row) {
    return info.mayHoldRow(row);
  }

  /** A new cursor, positioned nowhere until a seek. Holds at most one data block. */
  public CellIterator iterator() {
    return new TableIterator(this);
  }

  int dataBlockCount() {
    return lastKeys.length;
  }

  long dataBlockOffset(int i) {
    return blockOffsets[i];
  }

  CellKey lastKeyOfBlock(int i) {
    return lastKeys[i];
  }

  /** Index of the first data block whose last key is at or after {@code target}; the count if none. */
  int findBlock(CellKey target) {
    int lo = 0;
    int hi = lastKeys.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (CellKey.ORDER.compare(lastKeys[mid], target) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Data block {@code i}, checked and parsed. */
  Block dataBlock(int i) throws IOException {
    if (image != null) {
      Block b = imageBlocks.get(i);
      if (b == null) {
        b = loadDataBlock(i);
        imageBlocks.set(i, b);
      }
      return b;
    }
    if (cache == null) {
      return loadDataBlock(i);
    }
    return cache.get(fileId, blockOffsets[i], Block.class, () -> loadDataBlock(i));
  }

  private Block loadDataBlock(int i) throws IOException {
    BlockCodec.Raw raw = readStored(file, image, blockOffsets[i], blockSizes[i]);
    return Block.parse(raw.array(), raw.offset(), raw.length(), file.path(), blockOffsets[i]);
  }

  /** Closes the file and drops its blocks from the cache. */
  @Override
  public void close() throws IOException {
    if (cache != null) {
      cache.invalidateFile(fileId);
    }
    file.close();
  }

  @Override
  public String toString() {
    return "SSTableReader[" + file.path() + ", " + info + "]";
  }
}
