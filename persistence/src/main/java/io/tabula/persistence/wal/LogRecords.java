package io.tabula.persistence.wal;

import io.tabula.persistence.encoding.ByteSink;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * Encodes segment headers and records (layout in {@link CommitLogFormat} and
 * docs/formats/commitlog.md). Stateless; thread-safe.
 */
final class LogRecords {
  private LogRecords() {}

  static byte[] header(long segmentNumber) {
    byte[] h = new byte[CommitLogFormat.HEADER_SIZE];
    ByteSink.putLongAt(h, CommitLogFormat.HEADER_MAGIC, CommitLogFormat.MAGIC);
    ByteSink.putIntAt(h, CommitLogFormat.HEADER_VERSION, CommitLogFormat.VERSION);
    ByteSink.putLongAt(h, CommitLogFormat.HEADER_SEGMENT, segmentNumber);
    ByteSink.putIntAt(h, CommitLogFormat.HEADER_CRC, crc(h, 0, CommitLogFormat.HEADER_CRC));
    return h;
  }

  /** Fills in the batch header at {@code off} for {@code count} records taking {@code length} bytes. */
  static void batchHeader(byte[] b, int off, int length, int count) {
    ByteSink.putIntAt(b, off + CommitLogFormat.BATCH_LENGTH, length);
    ByteSink.putIntAt(b, off + CommitLogFormat.BATCH_COUNT, count);
    ByteSink.putIntAt(b, off + CommitLogFormat.BATCH_CRC, crc(b, off, CommitLogFormat.BATCH_CRC));
  }

  /** Writes a record's payload into the sink it is given. */
  @FunctionalInterface
  interface Payload {
    void writeTo(ByteSink out);
  }

  /**
   * One framed record: length, CRC slot, body. The CRC is left zero for {@link #seal} to
   * fill in, so the caller's thread encodes and the log writer's thread checksums.
   */
  static byte[] record(String tabletId, long sequence, Payload payload, int sizeHint) {
    byte[] id = tabletId.getBytes(StandardCharsets.UTF_8);
    ByteSink out = new ByteSink(CommitLogFormat.RECORD_BODY + 1 + 5 + id.length + 8 + sizeHint);
    out.putInt(0).putInt(0).putByte(CommitLogFormat.TYPE_ROW_MUTATION).putLengthPrefixed(id).putLong(sequence);
    payload.writeTo(out);
    int body = out.size() - CommitLogFormat.RECORD_BODY;
    if (body > CommitLogFormat.MAX_BODY) {
      throw new IllegalArgumentException("commit-log record of " + body + " bytes is over the limit of "
          + CommitLogFormat.MAX_BODY);
    }
    byte[] r = out.array().length == out.size() ? out.array() : out.toArray();
    ByteSink.putIntAt(r, CommitLogFormat.RECORD_LENGTH, body);
    return r;
  }

  /** Fills in the CRC of a record made by {@link #record}. */
  static void seal(byte[] record) {
    int body = record.length - CommitLogFormat.RECORD_BODY;
    ByteSink.putIntAt(record, CommitLogFormat.RECORD_CRC, recordCrc(record, 0, body));
  }

  /** CRC of a record at {@code off} whose body is {@code body} bytes: covers the length field and the body. */
  static int recordCrc(byte[] b, int off, int body) {
    CRC32C c = new CRC32C();
    c.update(b, off + CommitLogFormat.RECORD_LENGTH, 4);
    c.update(b, off + CommitLogFormat.RECORD_BODY, body);
    return (int) c.getValue();
  }

  static int crc(byte[] b, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    return (int) c.getValue();
  }
}
