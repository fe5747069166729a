package io.tabula.persistence.wal;

import io.tabula.persistence.encoding.ByteSink;
import java.util.function.Consumer;
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

  /**
   * Appends one framed record (length, CRC, body) to {@code out}, encoding the payload in
   * place: the log writer builds a whole batch this way, with no copy per record. Returns
   * false, leaving {@code out} as it was, if the record is over {@link
   * CommitLogFormat#MAX_BODY}.
   */
  static boolean append(ByteSink out, byte[] tabletId, long sequence, Consumer<ByteSink> payload) {
    int start = out.size();
    out.putInt(0).putInt(0).putByte(CommitLogFormat.TYPE_ROW_MUTATION).putLengthPrefixed(tabletId).putLong(sequence);
    try {
      payload.accept(out);
    } catch (RuntimeException e) {
      out.truncate(start);
      throw e;
    }
    int body = out.size() - start - CommitLogFormat.RECORD_BODY;
    if (body > CommitLogFormat.MAX_BODY) {
      out.truncate(start);
      return false;
    }
    byte[] b = out.array();
    ByteSink.putIntAt(b, start + CommitLogFormat.RECORD_LENGTH, body);
    ByteSink.putIntAt(b, start + CommitLogFormat.RECORD_CRC, recordCrc(b, start, body));
    return true;
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
