package io.tabula.persistence.sstable;

/**
 * Every constant of the SSTable format, in one place (docs/formats/sstable.md). Offsets are
 * derived from each other; codes stored on disk are explicit and never reused.
 */
final class SSTableFormat {
  private SSTableFormat() {}

  /**
   * The last 8 bytes of every SSTable, big-endian: {@code B1 67 AB 1E 05 D1 20 06}, read as
   * hex-speak "BIGTABLE" followed by "OSDI 2006", the venue and year of the paper this
   * system follows. A file that does not end in it is not an SSTable, or is truncated.
   */
  static final long MAGIC = 0xB167AB1E05D12006L;

  /** Version of the layout described in docs/formats/sstable.md. */
  static final int FORMAT_VERSION = 1;

  // ---- Block trailer: payload | u8 compression code | u32 crc32c(payload + code) ----
  static final int TRAILER_CODE_OFFSET = 0;
  static final int TRAILER_CRC_OFFSET = TRAILER_CODE_OFFSET + 1;
  static final int BLOCK_TRAILER_SIZE = TRAILER_CRC_OFFSET + 4;

  /**
   * A compressed payload is kept only if it saves at least 1/{@value} of the raw block;
   * otherwise the block is stored raw (code NONE) and reads skip the decompression.
   */
  static final int MIN_SAVING_DIVISOR = 8;

  /** Zstandard level the writer uses; readers do not need it. */
  static final int ZSTD_LEVEL = 3;

  // ---- Data and index blocks: entries | u32 restart offset × n | u32 n ----
  static final int RESTART_ENTRY_SIZE = 4;
  static final int RESTART_COUNT_SIZE = 4;

  // ---- Footer: three handles, version, crc, magic; fixed size, at the end of the file ----
  /** A block handle in the footer: u64 offset | u32 payload size. */
  static final int HANDLE_OFFSET = 0;
  static final int HANDLE_SIZE_FIELD = HANDLE_OFFSET + 8;
  static final int HANDLE_BYTES = HANDLE_SIZE_FIELD + 4;

  static final int FOOTER_INDEX_HANDLE = 0;
  static final int FOOTER_BLOOM_HANDLE = FOOTER_INDEX_HANDLE + HANDLE_BYTES;
  static final int FOOTER_PROPERTIES_HANDLE = FOOTER_BLOOM_HANDLE + HANDLE_BYTES;
  static final int FOOTER_VERSION = FOOTER_PROPERTIES_HANDLE + HANDLE_BYTES;
  /** CRC32C of footer bytes [0, FOOTER_CRC): the handles and the version. */
  static final int FOOTER_CRC = FOOTER_VERSION + 4;
  static final int FOOTER_MAGIC = FOOTER_CRC + 4;
  static final int FOOTER_SIZE = FOOTER_MAGIC + 8;

  // ---- Bloom block: u8 probes | u32 bit count | bits; empty payload = no filter ----
  static final int BLOOM_PROBES_OFFSET = 0;
  static final int BLOOM_BIT_COUNT_OFFSET = BLOOM_PROBES_OFFSET + 1;
  static final int BLOOM_BITS_OFFSET = BLOOM_BIT_COUNT_OFFSET + 4;
  static final int BLOOM_MAX_PROBES = 30;
  static final int BLOOM_MIN_BITS = 64;
  /** Seed of the xxhash64 every bloom key is hashed with. */
  static final long BLOOM_HASH_SEED = 0x7AB01AL;
  /** First byte of a bloom key: which kind of key follows. */
  static final byte BLOOM_TAG_ROW = 1;
  static final byte BLOOM_TAG_COLUMN = 2;
  static final byte BLOOM_TAG_FAMILY_TOMBSTONE = 3;
  static final byte BLOOM_TAG_ROW_TOMBSTONE = 4;

  // ---- Properties block: (varint tag | varint length | value)*, tags increasing ----
  /** varint: entries in the file. Required. */
  static final int PROP_ENTRIES = 1;
  /** bytes: row of the first entry (empty if no entries). Required. */
  static final int PROP_FIRST_ROW = 2;
  /** bytes: row of the last entry (empty if no entries). Required. */
  static final int PROP_LAST_ROW = 3;
  /** i64: smallest sequence (0 if no entries). Required. */
  static final int PROP_MIN_SEQUENCE = 4;
  /** i64: largest sequence (0 if no entries). Required. */
  static final int PROP_MAX_SEQUENCE = 5;
  /** varint: DELETE_ROW entries. Required. */
  static final int PROP_ROW_TOMBSTONES = 6;
  /** varint: DELETE_FAMILY entries. Required. */
  static final int PROP_FAMILY_TOMBSTONES = 7;
  /** varint: DELETE_COLUMN entries. Required. */
  static final int PROP_COLUMN_TOMBSTONES = 8;
  /** varint: data blocks. */
  static final int PROP_DATA_BLOCKS = 9;
  /** varint: sum of encoded key lengths before prefix compression. */
  static final int PROP_RAW_KEY_BYTES = 10;
  /** varint: sum of value lengths. */
  static final int PROP_RAW_VALUE_BYTES = 11;
  /** u8: the compression code the writer was asked for. */
  static final int PROP_COMPRESSION = 12;
  /** varint: distinct keys added to the bloom filter. */
  static final int PROP_BLOOM_KEYS = 13;
}
