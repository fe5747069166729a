package io.tabula.persistence.sstable;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.VarInts;
import io.tabula.persistence.storage.CorruptionException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The properties block (docs/formats/sstable.md, "Properties block"): a list of
 * {@code varint tag | varint length | value} in increasing tag order, tags from {@link
 * SSTableFormat}{@code .PROP_*}. A reader skips tags it does not know, so later versions can
 * add properties without a format bump; the required ones must be present. Immutable.
 */
record TableProperties(long entries, byte[] firstRow, byte[] lastRow, long minSequence, long maxSequence,
    long rowTombstones, long familyTombstones, long columnTombstones, long dataBlocks, long rawKeyBytes,
    long rawValueBytes, int compressionCode, long bloomKeys) {

  long tombstones() {
    return rowTombstones + familyTombstones + columnTombstones;
  }

  byte[] encode() {
    ByteSink out = new ByteSink(128 + firstRow.length + lastRow.length);
    varField(out, SSTableFormat.PROP_ENTRIES, entries);
    bytesField(out, SSTableFormat.PROP_FIRST_ROW, firstRow);
    bytesField(out, SSTableFormat.PROP_LAST_ROW, lastRow);
    longField(out, SSTableFormat.PROP_MIN_SEQUENCE, minSequence);
    longField(out, SSTableFormat.PROP_MAX_SEQUENCE, maxSequence);
    varField(out, SSTableFormat.PROP_ROW_TOMBSTONES, rowTombstones);
    varField(out, SSTableFormat.PROP_FAMILY_TOMBSTONES, familyTombstones);
    varField(out, SSTableFormat.PROP_COLUMN_TOMBSTONES, columnTombstones);
    varField(out, SSTableFormat.PROP_DATA_BLOCKS, dataBlocks);
    varField(out, SSTableFormat.PROP_RAW_KEY_BYTES, rawKeyBytes);
    varField(out, SSTableFormat.PROP_RAW_VALUE_BYTES, rawValueBytes);
    bytesField(out, SSTableFormat.PROP_COMPRESSION, new byte[] {(byte) compressionCode});
    varField(out, SSTableFormat.PROP_BLOOM_KEYS, bloomKeys);
    return out.toArray();
  }

  private static void varField(ByteSink out, int tag, long v) {
    out.putVar(tag).putVar(VarInts.sizeOf(v)).putVar(v);
  }

  private static void longField(ByteSink out, int tag, long v) {
    out.putVar(tag).putVar(8).putLong(v);
  }

  private static void bytesField(ByteSink out, int tag, byte[] v) {
    out.putVar(tag).putLengthPrefixed(v);
  }

  static TableProperties decode(byte[] b, int off, int len, String file, long fileOffset) throws CorruptionException {
    ByteBuffer in = ByteBuffer.wrap(b, off, len);
    long[] nums = new long[SSTableFormat.PROP_BLOOM_KEYS + 1];
    boolean[] seen = new boolean[nums.length];
    byte[] first = null;
    byte[] last = null;
    int compression = -1;
    int prevTag = 0;
    try {
      while (in.hasRemaining()) {
        int tag = VarInts.getVarInt(in);
        int n = VarInts.getVarInt(in);
        if (tag <= prevTag || n > in.remaining()) {
          throw new CorruptionException(file, fileOffset, "property tag " + tag + " after " + prevTag
              + " with " + n + " bytes is out of order or runs past the block");
        }
        prevTag = tag;
        ByteBuffer v = in.slice(in.position(), n);
        in.position(in.position() + n);
        switch (tag) {
          case SSTableFormat.PROP_FIRST_ROW -> first = bytes(v);
          case SSTableFormat.PROP_LAST_ROW -> last = bytes(v);
          case SSTableFormat.PROP_MIN_SEQUENCE, SSTableFormat.PROP_MAX_SEQUENCE -> nums[tag] = v.getLong();
          case SSTableFormat.PROP_COMPRESSION -> compression = v.get() & 0xFF;
          default -> {
            if (tag < nums.length) {
              nums[tag] = VarInts.getVarLong(v);
            }
          }
        }
        if (tag < seen.length) {
          seen[tag] = true;
        }
      }
    } catch (IllegalArgumentException | BufferUnderflowException e) {
      throw new CorruptionException(file, fileOffset, "malformed properties: " + e);
    }
    for (int tag = SSTableFormat.PROP_ENTRIES; tag <= SSTableFormat.PROP_COLUMN_TOMBSTONES; tag++) {
      if (!seen[tag]) {
        throw new CorruptionException(file, fileOffset, "required property " + tag + " is missing");
      }
    }
    return new TableProperties(nums[SSTableFormat.PROP_ENTRIES], first, last, nums[SSTableFormat.PROP_MIN_SEQUENCE],
        nums[SSTableFormat.PROP_MAX_SEQUENCE], nums[SSTableFormat.PROP_ROW_TOMBSTONES],
        nums[SSTableFormat.PROP_FAMILY_TOMBSTONES], nums[SSTableFormat.PROP_COLUMN_TOMBSTONES],
        nums[SSTableFormat.PROP_DATA_BLOCKS], nums[SSTableFormat.PROP_RAW_KEY_BYTES],
        nums[SSTableFormat.PROP_RAW_VALUE_BYTES], compression, nums[SSTableFormat.PROP_BLOOM_KEYS]);
  }

  private static byte[] bytes(ByteBuffer v) {
    byte[] out = new byte[v.remaining()];
    v.get(out);
    return out;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TableProperties p && Arrays.equals(encode(), p.encode());
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(encode());
  }
}
