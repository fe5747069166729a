package io.tabula.persistence.sstable;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.CellKeyCodec;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.storage.WritableFile;
import java.io.Closeable;
import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;

/**
 * Writes one SSTable: an immutable, sorted file of (CellKey -> value) entries (paper §5.3).
 * The layout, in full in {@code docs/formats/sstable.md}:
 *
 * <pre>
 * data block 0 | ... | data block n-1 | bloom block | properties block | index block | footer
 *
 * stored block := payload | u8 compressionCode | u32 crc32c(payload | code)
 * data block   := entry* | u32 restartOffset × r | u32 r
 * entry        := varint shared | varint unshared | varint valueLen | key[shared..] | value
 * key          := {@link CellKeyCodec} (row | kind | family | qualifier | timestamp | sequence)
 * index block  := a data block whose entries are (last key of data block i -> varint offset | varint size)
 * footer (52)  := (u64 offset | u32 size) × {index, bloom, properties} | u32 version
 *                 | u32 crc32c(footer[0, 40)) | u64 magic B167AB1E05D12006
 * </pre>
 *
 * All fixed-width integers are big-endian; a handle's size counts the payload, not the
 * 5-byte trailer after it.
 *
 * <p>Use: {@link #add} entries in strictly increasing {@link CellKey#ORDER}, then {@link
 * #finish()}, which syncs and closes the file. The writer owns the file from construction:
 * {@link #close()} without {@code finish()} abandons it (closes it, unsynced and incomplete;
 * the caller deletes it). After an I/O error the writer refuses further calls. Not
 * thread-safe. Output is a function of the entries and options only, so the same input
 * gives the same bytes.
 */
public final class SSTableWriter implements Closeable {
  private final WritableFile file;
  private final SSTableOptions options;
  private final BlockBuilder data;
  private final BlockBuilder index;
  private final BloomFilter.Builder bloom;

  private CellKey lastKey;
  private byte[] lastEncodedKey;
  private byte[] firstRow = ByteArrays.EMPTY;
  private byte[] bloomRow;
  private CellKey bloomColumn;
  private long entries;
  private long minSequence = Long.MAX_VALUE;
  private long maxSequence = Long.MIN_VALUE;
  private long rowTombstones;
  private long familyTombstones;
  private long columnTombstones;
  private long dataBlocks;
  private long rawKeyBytes;
  private long rawValueBytes;
  private boolean closed;
  private boolean failed;

  public SSTableWriter(WritableFile file, SSTableOptions options) {
    this.file = Objects.requireNonNull(file, "file");
    this.options = Objects.requireNonNull(options, "options");
    this.data = new BlockBuilder(options.restartInterval(), options.blockSize() + options.blockSize() / 4);
    this.index = new BlockBuilder(options.restartInterval(), 4096);
    this.bloom = new BloomFilter.Builder(options.bloomBitsPerKey());
  }

  /**
   * Appends an entry.
   *
   * @throws IllegalArgumentException if {@code key} is not after the previous key
   * @throws IllegalStateException if finished, closed or failed
   */
  public void add(CellKey key, byte[] value) throws IOException {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    requireOpen();
    if (lastKey != null && CellKey.ORDER.compare(lastKey, key) >= 0) {
      throw new IllegalArgumentException("SSTable keys must strictly increase: " + key + " after " + lastKey);
    }
    byte[] encoded = CellKeyCodec.encode(key);
    if (entries == 0) {
      firstRow = key.row();
    }
    addToBloom(key);
    account(key, encoded.length, value.length);
    data.add(encoded, value);
    lastKey = key;
    lastEncodedKey = encoded;
    if (data.sizeEstimate() >= options.blockSize()) {
      flushDataBlock();
    }
  }

  private void account(CellKey key, int keyBytes, int valueBytes) {
    entries++;
    minSequence = Math.min(minSequence, key.sequence());
    maxSequence = Math.max(maxSequence, key.sequence());
    switch (key.kind()) {
      case DELETE_ROW -> rowTombstones++;
      case DELETE_FAMILY -> familyTombstones++;
      case DELETE_COLUMN -> columnTombstones++;
      case PUT, MERGE, TOKEN -> { }
    }
    rawKeyBytes += keyBytes;
    rawValueBytes += valueBytes;
  }

  private void addToBloom(CellKey key) {
    if (options.bloomBitsPerKey() == 0) {
      return;
    }
    if (bloomRow == null || !Arrays.equals(bloomRow, key.row())) {
      bloomRow = key.row();
      bloomColumn = null;
      bloom.add(BloomFilter.rowHash(key.row()));
    }
    if (key.kind() == CellKind.DELETE_ROW) {
      bloom.add(BloomFilter.rowTombstoneHash(key.row()));
    } else if (key.kind() == CellKind.DELETE_FAMILY) {
      bloom.add(BloomFilter.familyTombstoneHash(key.row(), key.family()));
    } else if (bloomColumn == null || !bloomColumn.sameColumn(key)) {
      bloomColumn = key;
      bloom.add(BloomFilter.columnHash(key.row(), key.family(), key.qualifier()));
    }
  }

  private void flushDataBlock() throws IOException {
    if (data.isEmpty()) {
      return;
    }
    long offset = file.position();
    int payload = writeBlock(data.finish(), options.compression());
    data.reset();
    index.add(lastEncodedKey, new ByteSink(20).putVar(offset).putVar(payload).toArray());
    dataBlocks++;
  }

  /** Writes a stored block; returns its payload size. */
  private int writeBlock(byte[] raw, Compression c) throws IOException {
    byte[] stored = BlockCodec.encode(raw, c);
    boolean ok = false;
    try {
      file.append(stored);
      ok = true;
    } finally {
      failed |= !ok;
    }
    return stored.length - SSTableFormat.BLOCK_TRAILER_SIZE;
  }

  /**
   * Writes the last data block, the bloom, properties and index blocks and the footer,
   * syncs and closes the file.
   *
   * @throws IllegalStateException if already finished, closed or failed
   */
  public SSTableInfo finish() throws IOException {
    requireOpen();
    boolean ok = false;
    try {
      flushDataBlock();
      long bloomOffset = file.position();
      int bloomSize = writeBlock(bloom.finish(), options.compression());
      TableProperties props = properties();
      long propsOffset = file.position();
      int propsSize = writeBlock(props.encode(), options.compression());
      long indexOffset = file.position();
      int indexSize = writeBlock(index.finish(), options.compression());
      file.append(Footer.encode(new Footer(indexOffset, indexSize, bloomOffset, bloomSize, propsOffset, propsSize)));
      file.sync();
      long size = file.position();
      closed = true;
      file.close();
      ok = true;
      return new SSTableInfo(props.entries(), size, props.firstRow(), props.lastRow(), props.maxSequence(),
          props.minSequence(), props.tombstones());
    } finally {
      if (!ok) {
        failed = true;
      }
    }
  }

  private TableProperties properties() {
    boolean empty = entries == 0;
    return new TableProperties(entries, firstRow, empty ? ByteArrays.EMPTY : lastKey.row(),
        empty ? 0 : minSequence, empty ? 0 : maxSequence, rowTombstones, familyTombstones, columnTombstones,
        dataBlocks, rawKeyBytes, rawValueBytes, options.compression().code(), bloom.keys());
  }

  /** Entries added so far. */
  public long entries() {
    return entries;
  }

  /** Bytes written to the file so far; the pending block is not counted. */
  public long fileBytes() {
    return file.position();
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("SSTable writer for " + file.path() + " is finished or closed");
    }
    if (failed) {
      throw new IllegalStateException("SSTable writer for " + file.path() + " failed earlier; delete the file");
    }
  }

  /** Abandons an unfinished file (closing it); a no-op after {@link #finish()}. */
  @Override
  public void close() throws IOException {
    if (!closed) {
      closed = true;
      file.close();
    }
  }
}
