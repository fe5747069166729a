package io.tabula.persistence.sstable;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.storage.CorruptionException;
import java.util.Arrays;
import net.jpountz.xxhash.XXHash64;
import net.jpountz.xxhash.XXHashFactory;

/**
 * The bloom filter of an SSTable (paper §6; docs/formats/sstable.md, "Bloom block"). One
 * filter holds four kinds of keys, each hashed with a leading tag byte so they never meet:
 *
 * <pre>
 * row              : 0x01 | row                                       (every entry)
 * column           : 0x02 | varint rowLen | row | varint famLen | family | qualifier
 *                                                                     (PUT, DELETE_COLUMN)
 * family tombstone : 0x03 | varint rowLen | row | family              (DELETE_FAMILY)
 * row tombstone    : 0x04 | row                                       (DELETE_ROW)
 * payload          : u8 probes | u32 bitCount | bitCount / 8 bytes of bits   (empty = no filter)
 * </pre>
 *
 * A key's 64-bit xxhash h gives probes at {@code (lo32(h) + i * hi32(h)) mod bitCount} for
 * i in [0, probes), both halves unsigned (double hashing); bit b is bit {@code b & 7} of byte
 * {@code b >>> 3}. A column question is also answered yes when the row or the family has a
 * tombstone in the file, which the filter records under its own keys. Immutable;
 * thread-safe.
 */
final class BloomFilter {
  private static final XXHash64 HASH = XXHashFactory.fastestJavaInstance().hash64();
  private static final BloomFilter NONE = new BloomFilter(0, 0, null);

  private final int probes;
  private final long bitCount;
  private final byte[] bits;

  private BloomFilter(int probes, long bitCount, byte[] bits) {
    this.probes = probes;
    this.bitCount = bitCount;
    this.bits = bits;
  }

  static BloomFilter parse(byte[] b, int off, int len, String file, long fileOffset) throws CorruptionException {
    if (len == 0) {
      return NONE;
    }
    if (len < SSTableFormat.BLOOM_BITS_OFFSET) {
      throw new CorruptionException(file, fileOffset, "bloom block of " + len + " bytes is shorter than its header");
    }
    int probes = b[off + SSTableFormat.BLOOM_PROBES_OFFSET] & 0xFF;
    long bitCount = ByteSink.getIntAt(b, off + SSTableFormat.BLOOM_BIT_COUNT_OFFSET) & 0xFFFFFFFFL;
    if (probes < 1 || probes > SSTableFormat.BLOOM_MAX_PROBES || bitCount == 0 || bitCount % 8 != 0
        || bitCount / 8 != len - SSTableFormat.BLOOM_BITS_OFFSET) {
      throw new CorruptionException(file, fileOffset, "bloom block with " + probes + " probes and " + bitCount
          + " bits does not fit its " + len + " bytes");
    }
    int from = off + SSTableFormat.BLOOM_BITS_OFFSET;
    return new BloomFilter(probes, bitCount, Arrays.copyOfRange(b, from, off + len));
  }

  boolean present() {
    return bits != null;
  }

  boolean mayContain(long hash) {
    if (bits == null) {
      return true;
    }
    long h1 = hash & 0xFFFFFFFFL;
    long h2 = hash >>> 32;
    for (int i = 0; i < probes; i++) {
      long bit = (h1 + i * h2) % bitCount;
      if ((bits[(int) (bit >>> 3)] & (1 << (bit & 7))) == 0) {
        return false;
      }
    }
    return true;
  }

  // ---- keys ----

  static long rowHash(byte[] row) {
    return hash(new ByteSink(row.length + 1).putByte(SSTableFormat.BLOOM_TAG_ROW).put(row));
  }

  static long rowTombstoneHash(byte[] row) {
    return hash(new ByteSink(row.length + 1).putByte(SSTableFormat.BLOOM_TAG_ROW_TOMBSTONE).put(row));
  }

  static long familyTombstoneHash(byte[] row, byte[] family) {
    return hash(new ByteSink(row.length + family.length + 6).putByte(SSTableFormat.BLOOM_TAG_FAMILY_TOMBSTONE)
        .putLengthPrefixed(row).put(family));
  }

  static long columnHash(byte[] row, byte[] family, byte[] qualifier) {
    return hash(new ByteSink(row.length + family.length + qualifier.length + 11)
        .putByte(SSTableFormat.BLOOM_TAG_COLUMN).putLengthPrefixed(row).putLengthPrefixed(family).put(qualifier));
  }

  private static long hash(ByteSink key) {
    byte[] b = key.toArray();
    return HASH.hash(b, 0, b.length, SSTableFormat.BLOOM_HASH_SEED);
  }

  /** Collects key hashes and builds the block payload. Not thread-safe. */
  static final class Builder {
    private final int bitsPerKey;
    private long[] hashes = new long[1024];
    private int count;

    Builder(int bitsPerKey) {
      this.bitsPerKey = bitsPerKey;
    }

    void add(long hash) {
      if (count == hashes.length) {
        hashes = Arrays.copyOf(hashes, count * 2);
      }
      hashes[count++] = hash;
    }

    int keys() {
      return count;
    }

    /** The bloom block payload; empty if bits per key is 0. */
    byte[] finish() {
      if (bitsPerKey == 0) {
        return new byte[0];
      }
      long wanted = Math.max(SSTableFormat.BLOOM_MIN_BITS, (long) count * bitsPerKey);
      long bitCount = (wanted + 7) / 8 * 8;
      if (bitCount > 0xFFFF_FFF8L) {
        bitCount = 0xFFFF_FFF8L;
      }
      int probes = (int) Math.max(1, Math.min(SSTableFormat.BLOOM_MAX_PROBES, Math.round(bitsPerKey * Math.log(2))));
      byte[] out = new byte[SSTableFormat.BLOOM_BITS_OFFSET + (int) (bitCount / 8)];
      out[SSTableFormat.BLOOM_PROBES_OFFSET] = (byte) probes;
      ByteSink.putIntAt(out, SSTableFormat.BLOOM_BIT_COUNT_OFFSET, (int) bitCount);
      for (int k = 0; k < count; k++) {
        long h1 = hashes[k] & 0xFFFFFFFFL;
        long h2 = hashes[k] >>> 32;
        for (int i = 0; i < probes; i++) {
          long bit = (h1 + i * h2) % bitCount;
          out[SSTableFormat.BLOOM_BITS_OFFSET + (int) (bit >>> 3)] |= (byte) (1 << (bit & 7));
        }
      }
      return out;
    }
  }
}
