package io.tabula.persistence.wal;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.VarInts;
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

  /** One framed record: length, CRC, body. */
  static byte[] record(String tabletId, long sequence, byte[] payload) {
    byte[] id = tabletId.getBytes(StandardCharsets.UTF_8);
    int body = 1 + VarInts.sizeOf(id.length) + id.length + 8 + payload.length;
    if (body > CommitLogFormat.MAX_BODY) {
      throw new IllegalArgumentException("commit-log record of " + body + " bytes is over the limit of "
          + CommitLogFormat.MAX_BODY);
    }
    byte[] r = new byte[CommitLogFormat.RECORD_BODY + body];
    ByteSink.putIntAt(r, CommitLogFormat.RECORD_LENGTH, body);
    int p = CommitLogFormat.RECORD_BODY;
    r[p++] = (byte) CommitLogFormat.TYPE_ROW_MUTATION;
    p = VarInts.putVarLong(r, p, id.length);
    System.arraycopy(id, 0, r, p, id.length);
    p += id.length;
    ByteSink.putLongAt(r, p, sequence);
    p += 8;
    System.arraycopy(payload, 0, r, p, payload.length);
    ByteSink.putIntAt(r, CommitLogFormat.RECORD_CRC, recordCrc(r, 0, body));
    return r;
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
