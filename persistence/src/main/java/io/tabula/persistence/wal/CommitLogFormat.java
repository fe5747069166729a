package io.tabula.persistence.wal;

/**
 * Constants of a commit-log segment; see docs/formats/commitlog.md.
 *
 * <pre>
 * segment := header | batch* | zero*   (zeros: the unwritten rest of a preallocated segment; version 2)
 * header (24 bytes):
 *   u64 magic "TBLACLOG" | u32 version | u64 segment number | u32 CRC32C(previous 20 bytes)
 * batch (one group commit: one write, one fsync):
 *   u32 length n | u32 record count | u32 CRC32C(previous 8 bytes) | n bytes of records
 * record:
 *   u32 length n | u32 CRC32C(length field + body) | body (n bytes)
 * body:
 *   u8 type (1 = row mutation) | varint tabletIdLength | tabletId | i64 sequence | payload
 * </pre>
 */
final class CommitLogFormat {
  private CommitLogFormat() {}

  /** ASCII "TBLACLOG": TaBuLA Commit LOG. */
  static final long MAGIC = 0x54424C41434C4F47L;
  /** Written by this code; version 1 (the same layout, never preallocated) is still read. */
  static final int VERSION = 2;

  static final int HEADER_MAGIC = 0;
  static final int HEADER_VERSION = HEADER_MAGIC + 8;
  static final int HEADER_SEGMENT = HEADER_VERSION + 4;
  static final int HEADER_CRC = HEADER_SEGMENT + 8;
  static final int HEADER_SIZE = HEADER_CRC + 4;

  static final int BATCH_LENGTH = 0;
  static final int BATCH_COUNT = BATCH_LENGTH + 4;
  static final int BATCH_CRC = BATCH_COUNT + 4;
  static final int BATCH_HEADER_SIZE = BATCH_CRC + 4;
  /** A batch longer than this can only be damage. */
  static final int MAX_BATCH = Integer.MAX_VALUE - 64;

  static final int RECORD_LENGTH = 0;
  static final int RECORD_CRC = RECORD_LENGTH + 4;
  static final int RECORD_BODY = RECORD_CRC + 4;

  /** Record type codes, stored: never renumber or reuse. */
  static final int TYPE_ROW_MUTATION = 1;

  /** The smallest body: type, a one-byte id length, a one-byte id, the sequence. */
  static final int MIN_BODY = 1 + 1 + 1 + 8;
  /** A longer length can only be damage. */
  static final int MAX_BODY = 256 << 20;

  static final String SUFFIX = ".log";

  static String segmentName(long number) {
    return String.format("%06d%s", number, SUFFIX);
  }

  /** The segment number of a file name, or -1 if it is not a segment. */
  static long segmentNumber(String name) {
    if (!name.endsWith(SUFFIX) || name.length() == SUFFIX.length()) {
      return -1;
    }
    String digits = name.substring(0, name.length() - SUFFIX.length());
    for (int i = 0; i < digits.length(); i++) {
      if (!Character.isDigit(digits.charAt(i))) {
        return -1;
      }
    }
    return digits.length() > 18 ? -1 : Long.parseLong(digits);
  }
}
