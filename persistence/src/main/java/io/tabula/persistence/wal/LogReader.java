package io.tabula.persistence.wal;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.VarInts;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads one segment's batches in order and tells a torn tail from corruption.
 *
 * <p>A batch is valid when its header checksum matches and its records, each with its own
 * length and CRC, fill it exactly. The writer has at most one batch written but not yet
 * synced, always the last of the last segment; so in the last segment a bad batch after
 * which no valid batch follows is a torn tail (the unacknowledged write that was under way)
 * and is dropped whole. Any other bad batch, in a sealed segment or followed by a valid
 * batch, is corruption, reported with the file and the offset of the first bad record.
 * A batch's records are delivered only once the whole batch checked out.
 *
 * <p>Zeros: a segment of version 2 may end in zeros after its last batch, where a prepared
 * segment was not written yet ({@link SegmentPreparer}); reading stops there, in any segment.
 * A <em>blank</em> segment (a header, then zeros where its first batch's header would be) holds
 * no batch the writer wrote whole; the "last" segment, whose torn tail is tolerated, is the
 * last one that is not blank ({@link #lastWithData}), because the writer may have a blank
 * segment ready beyond the one it was writing. Blank segments after it are read as last too.
 */
final class LogReader {
  private LogReader() {}

  /**
   * Where a segment's clean part ends ({@code validEnd}), where its torn tail ends (its last
   * byte that is not zero; {@code validEnd} when there is none), and its per-tablet highest
   * sequence.
   */
  record SegmentSummary(long records, long validEnd, long tornEnd, Map<String, Long> maxSequence) {}

  static byte[] readAll(Storage storage, String path) throws IOException {
    try (ReadableFile f = storage.open(path)) {
      if (f.size() > Integer.MAX_VALUE - 64) {
        throw new CorruptionException(path, 0, "segment of " + f.size() + " bytes is larger than any segment");
      }
      return f.readFully(0, (int) f.size());
    }
  }

  /**
   * Checks segment {@code b} (read from {@code path}) and delivers each valid record to
   * {@code visitor}; a null visitor only checks (the summary then has no sequences). A torn
   * tail is tolerated in the {@code last} segment only.
   */
  static SegmentSummary read(String path, byte[] b, boolean last, RecordVisitor visitor) throws IOException {
    Map<String, Long> maxSeq = new HashMap<>();
    if (b.length == 0) {
      return new SegmentSummary(0, 0, 0, maxSeq);
    }
    String headerProblem = headerProblem(b);
    int dataEnd = lastNonZero(b) + 1;
    if (headerProblem != null) {
      if (last && findValidBatch(b, 0) < 0) {
        return new SegmentSummary(0, 0, dataEnd, maxSeq);
      }
      throw new CorruptionException(path, 0, headerProblem);
    }
    // Version 1 segments were never preallocated: zeros at the end of one are damage.
    int end = ByteSink.getIntAt(b, CommitLogFormat.HEADER_VERSION) == 1 ? b.length : dataEnd;
    int pos = CommitLogFormat.HEADER_SIZE;
    long records = 0;
    while (pos < end) {
      long bad = firstProblem(b, pos);
      if (bad >= 0) {
        if (last && findValidBatch(b, pos + 1) < 0) {
          return new SegmentSummary(records, pos, Math.max(pos, dataEnd), maxSeq);
        }
        throw new CorruptionException(path, bad, describe(b, pos, (int) bad)
            + (last ? "; valid batches follow it" : " in a sealed segment"));
      }
      int length = ByteSink.getIntAt(b, pos + CommitLogFormat.BATCH_LENGTH);
      int batchEnd = pos + CommitLogFormat.BATCH_HEADER_SIZE + length;
      if (visitor == null) { // checking only
        records += ByteSink.getIntAt(b, pos + CommitLogFormat.BATCH_COUNT);
        pos = batchEnd;
        continue;
      }
      for (int r = pos + CommitLogFormat.BATCH_HEADER_SIZE; r < batchEnd; ) {
        int body = ByteSink.getIntAt(b, r + CommitLogFormat.RECORD_LENGTH);
        ByteBuffer in = ByteBuffer.wrap(b, r + CommitLogFormat.RECORD_BODY + 1, body - 1);
        int idLen = VarInts.getVarInt(in);
        String id = new String(b, in.position(), idLen, StandardCharsets.UTF_8);
        in.position(in.position() + idLen);
        long seq = in.getLong();
        byte[] payload = new byte[in.remaining()];
        in.get(payload);
        visitor.record(id, seq, payload);
        maxSeq.merge(id, seq, Math::max);
        records++;
        r += CommitLogFormat.RECORD_BODY + body;
      }
      pos = batchEnd;
    }
    return new SegmentSummary(records, pos, pos, maxSeq);
  }

  /**
   * The index in {@code paths} (segments in order) of the last segment that is not blank, or
   * -1 if they all are. Reads the first bytes of the blank ones at the end and of the one
   * before them.
   */
  static int lastWithData(Storage storage, java.util.List<String> paths) throws IOException {
    for (int i = paths.size() - 1; i >= 0; i--) {
      if (!blank(storage, paths.get(i))) {
        return i;
      }
    }
    return -1;
  }

  /** Whether the segment at {@code path} is blank; reads its header and first batch header only. */
  private static boolean blank(Storage storage, String path) throws IOException {
    try (ReadableFile f = storage.open(path)) {
      return blank(f.readFully(0, (int) Math.min(f.size(), CommitLogFormat.HEADER_SIZE
          + CommitLogFormat.BATCH_HEADER_SIZE)));
    }
  }

  /**
   * Whether the segment that starts with {@code b} is blank: a valid header of version 2, and
   * zeros where its first batch's header would be, so the writer never wrote a batch there that
   * reached the disk. (If a later part of its first write did, without the part holding the
   * header, reading it as a segment at or after the last one drops that as a torn tail.)
   */
  static boolean blank(byte[] b) {
    if (b.length < CommitLogFormat.HEADER_SIZE || headerProblem(b) != null
        || ByteSink.getIntAt(b, CommitLogFormat.HEADER_VERSION) < 2) {
      return false;
    }
    int end = Math.min(b.length, CommitLogFormat.HEADER_SIZE + CommitLogFormat.BATCH_HEADER_SIZE);
    for (int i = CommitLogFormat.HEADER_SIZE; i < end; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /** The index of the last byte of {@code b} that is not zero, -1 if none. */
  private static int lastNonZero(byte[] b) {
    int i = b.length - 1;
    while (i >= 0 && b[i] == 0) {
      i--;
    }
    return i;
  }

  private static String headerProblem(byte[] b) {
    if (b.length < CommitLogFormat.HEADER_SIZE) {
      return "segment of " + b.length + " bytes is shorter than its header";
    }
    if (ByteSink.getLongAt(b, CommitLogFormat.HEADER_MAGIC) != CommitLogFormat.MAGIC) {
      return "bad magic number";
    }
    if (ByteSink.getIntAt(b, CommitLogFormat.HEADER_CRC) != LogRecords.crc(b, 0, CommitLogFormat.HEADER_CRC)) {
      return "segment header checksum mismatch";
    }
    int v = ByteSink.getIntAt(b, CommitLogFormat.HEADER_VERSION);
    if (v != 1 && v != CommitLogFormat.VERSION) {
      return "unknown segment format version " + v;
    }
    return null;
  }

  /** -1 if the batch at {@code pos} is valid, else the offset where it goes wrong. */
  private static long firstProblem(byte[] b, int pos) {
    if (b.length - pos < CommitLogFormat.BATCH_HEADER_SIZE
        || ByteSink.getIntAt(b, pos + CommitLogFormat.BATCH_CRC) != LogRecords.crc(b, pos, CommitLogFormat.BATCH_CRC)) {
      return pos;
    }
    int length = ByteSink.getIntAt(b, pos + CommitLogFormat.BATCH_LENGTH);
    int count = ByteSink.getIntAt(b, pos + CommitLogFormat.BATCH_COUNT);
    int start = pos + CommitLogFormat.BATCH_HEADER_SIZE;
    if (length < 0 || length > b.length - start || count <= 0) {
      return pos;
    }
    int end = start + length;
    int r = start;
    for (int i = 0; i < count; i++) {
      int body = validRecordAt(b, r, end);
      if (body < 0) {
        return r;
      }
      r += CommitLogFormat.RECORD_BODY + body;
    }
    return r == end ? -1 : r;
  }

  /** The body length of a well-formed record at {@code pos} ending by {@code end}, or -1. */
  private static int validRecordAt(byte[] b, int pos, int end) {
    if (end - pos < CommitLogFormat.RECORD_BODY) {
      return -1;
    }
    int body = ByteSink.getIntAt(b, pos + CommitLogFormat.RECORD_LENGTH);
    if (body < CommitLogFormat.MIN_BODY || body > CommitLogFormat.MAX_BODY
        || body > end - pos - CommitLogFormat.RECORD_BODY) {
      return -1;
    }
    if (ByteSink.getIntAt(b, pos + CommitLogFormat.RECORD_CRC) != LogRecords.recordCrc(b, pos, body)) {
      return -1;
    }
    int p = pos + CommitLogFormat.RECORD_BODY;
    if ((b[p] & 0xFF) != CommitLogFormat.TYPE_ROW_MUTATION) {
      return -1;
    }
    try {
      ByteBuffer in = ByteBuffer.wrap(b, p + 1, body - 1);
      int idLen = VarInts.getVarInt(in);
      return idLen > 0 && in.remaining() >= idLen + 8 ? body : -1;
    } catch (IllegalArgumentException e) {
      return -1;
    }
  }

  private static long findValidBatch(byte[] b, int from) {
    int nonZero = -1; // the first byte at or after p that is not zero
    for (int p = Math.max(from, 0); p + CommitLogFormat.BATCH_HEADER_SIZE <= b.length; p++) {
      if (nonZero < p) {
        nonZero = p;
        while (nonZero < b.length && b[nonZero] == 0) {
          nonZero++;
        }
        if (nonZero == b.length) {
          return -1; // only zeros are left, and a batch header is never all zero (its count is not)
        }
      }
      if (nonZero - p >= CommitLogFormat.BATCH_HEADER_SIZE) {
        p = nonZero - CommitLogFormat.BATCH_HEADER_SIZE; // the loop's p++ makes it the first that may hold it
        continue;
      }
      if (ByteSink.getIntAt(b, p + CommitLogFormat.BATCH_CRC) == LogRecords.crc(b, p, CommitLogFormat.BATCH_CRC)
          && firstProblem(b, p) < 0) {
        return p;
      }
    }
    return -1;
  }

  private static String describe(byte[] b, int batch, int bad) {
    if (bad == batch) {
      return "batch header damaged or cut short";
    }
    if (b.length - bad < CommitLogFormat.RECORD_BODY) {
      return "record header cut short";
    }
    int body = ByteSink.getIntAt(b, bad);
    if (body < CommitLogFormat.MIN_BODY || body > CommitLogFormat.MAX_BODY) {
      return "impossible record length " + body;
    }
    return "record checksum mismatch, or a record that does not fit its batch";
  }
}
