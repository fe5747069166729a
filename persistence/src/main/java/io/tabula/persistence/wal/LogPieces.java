package io.tabula.persistence.wal;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;

/**
 * Recovery of another node's commit log in sorted pieces (paper §6, "Commit-log
 * implementation"): each segment of the dead log (a piece of at most the segment size, 64 MiB
 * by default) is sorted once by tablet, keeping each tablet's records in log order, into a
 * file beside it, {@code NNNNNN.sorted} (docs/formats/recovery-piece.md). Every tablet that
 * needs the log then reads only its own run of each piece, instead of the whole log.
 *
 * <p>Whoever first needs a piece sorts it (a tablet being opened, or a node the master asked
 * to). The sort is deterministic: the same segment gives the same piece, byte for byte. It is
 * written under a temporary name, synced, and published with {@link Storage#renameIfAbsent},
 * so a piece, once there, never changes: a second sorter (another node, a sort redone after a
 * crash) discards its copy and reads the first. A recovery interrupted anywhere is resumed by
 * the next reader, never done twice with different results, even if a fenced writer that was
 * frozen appends to the segment later (those records were never acknowledged).
 *
 * <p>A piece is made only of a segment that can no longer change: a sealed one (not the
 * folder's last), or any segment of a fenced folder. The last segment of a folder that is not
 * fenced is read whole, each time. The log must be another node's (fenced, dead, an earlier
 * life of this node, or a live node's whose tablet failed to close cleanly): it is only read,
 * never cut. Thread-safe; sorts of one segment in this process are shared.
 */
public final class LogPieces {
  /** File name suffix of a sorted piece, beside its segment's {@code .log}. */
  static final String SUFFIX = ".sorted";
  static final long MAGIC = 0x54424C4150494543L; // "TBLAPIEC": TaBuLA PIECe
  static final int VERSION = 1;
  static final int HEADER_SIZE = 16;
  static final int FOOTER_SIZE = 16;

  /** One tablet's run in a piece. */
  record Run(String tabletId, long offset, long length, long records, long maxSequence) {}

  /** Sorts of this process under way, by piece path, so concurrent openers share one. */
  private static final Map<String, CompletableFuture<Void>> SORTING = new ConcurrentHashMap<>();

  private LogPieces() {}

  /**
   * Delivers, in order, every valid record of tablet {@code tabletId} in the log folder
   * {@code dir}, reading its run of each segment's sorted piece (sorting a segment first if
   * its piece is not there yet). A torn tail of the last segment (the crash that ended the
   * log) is skipped; damage in a segment is thrown. If a piece cannot be made or read (a full
   * disk, a file system without hard links, a damaged piece), the segment is read whole
   * instead, and {@code degraded} hears why. Returns how many records were delivered.
   *
   * @throws LogFolderMissingException if there is no folder {@code dir}
   */
  public static long replay(Storage storage, String dir, String tabletId, RecordVisitor visitor,
      BiConsumer<String, Throwable> degraded) throws IOException {
    boolean fenced = isFenced(storage, dir); // before the listing: a fenced folder gets no new segment
    List<String> segments = segmentsToRecover(storage, dir);
    int lastWithData = LogReader.lastWithData(storage, paths(dir, segments));
    long delivered = 0;
    for (int i = 0; i < segments.size(); i++) {
      boolean last = i >= lastWithData;
      String path = Storage.path(dir, segments.get(i));
      if (!last || fenced) {
        try {
          delivered += readRun(storage, ensureSorted(storage, dir, segments.get(i), last), tabletId, visitor);
          continue;
        } catch (CorruptionException e) {
          if (e.file().equals(path)) {
            throw e; // the segment itself is damaged: reading it whole fails the same way
          }
          degraded.accept("reading the recovery piece of " + path + " (the segment is read whole instead)", e);
        } catch (IOException | RuntimeException e) {
          degraded.accept("sorting " + path + " into its recovery piece (the segment is read whole instead)", e);
        }
      }
      // The last segment of a folder not fenced may still grow (a live node whose tablet failed
      // to close cleanly): a piece of it would miss what comes later. Read it whole, each time.
      long[] n = {0};
      LogReader.read(path, LogReader.readAll(storage, path), last, (id, seq, payload) -> {
        if (id.equals(tabletId)) {
          visitor.record(id, seq, payload);
          n[0]++;
        }
      });
      delivered += n[0];
    }
    return delivered;
  }

  /**
   * Sorts segment {@code segment} of the log folder {@code dir} into its piece, unless the
   * piece is there already or the folder is not fenced (its segments may still change). The
   * work one node does for the master's recovery of a dead node's log.
   *
   * @throws LogFolderMissingException if there is no folder {@code dir}
   */
  public static void sortSegment(Storage storage, String dir, String segment) throws IOException {
    if (!isFenced(storage, dir)) {
      return;
    }
    List<String> segments = segmentsToRecover(storage, dir);
    if (!segments.contains(segment)) {
      throw new IllegalArgumentException("no segment " + segment + " in " + dir);
    }
    int lastWithData = LogReader.lastWithData(storage, paths(dir, segments));
    ensureSorted(storage, dir, segment, segments.indexOf(segment) >= lastWithData);
  }

  /** Whether {@code dir} is fenced; a look that failed is thrown as the error it is, never read as "not fenced". */
  private static boolean isFenced(Storage storage, String dir) throws IOException {
    try {
      return storage.isFenced(dir);
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /**
   * The paths of the segments of the log folder {@code dir} that a recovery reads, by number.
   *
   * @throws LogFolderMissingException if there is no such folder
   */
  static List<String> segmentPathsToRecover(Storage storage, String dir) throws IOException {
    return paths(dir, segmentsToRecover(storage, dir));
  }

  /**
   * The segment file names of the log folder {@code dir} that a recovery reads, by number.
   * A folder named for recovery always exists (a log makes its folder when it opens), so a
   * missing one is an error, not an empty log.
   *
   * @throws LogFolderMissingException if there is no such folder
   */
  private static List<String> segmentsToRecover(Storage storage, String dir) throws IOException {
    List<String> names = segments(storage, dir);
    if (names.isEmpty()) { // a listing does not tell an empty folder from a missing one
      try {
        if (!storage.exists(dir)) {
          throw new LogFolderMissingException(dir);
        }
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    }
    return names;
  }

  private static List<String> paths(String dir, List<String> names) {
    return names.stream().map(n -> Storage.path(dir, n)).toList();
  }

  /** The segment file names of {@code dir}, by number (none if there is no such folder). */
  public static List<String> segments(Storage storage, String dir) throws IOException {
    List<String> names = new ArrayList<>();
    for (String name : storage.list(dir)) {
      if (CommitLogFormat.segmentNumber(name) >= 0) {
        names.add(name);
      }
    }
    names.sort(java.util.Comparator.comparingLong(CommitLogFormat::segmentNumber));
    return names;
  }

  /** The path of {@code segment}'s piece, sorted first if it is not there yet. */
  static String ensureSorted(Storage storage, String dir, String segment, boolean last) throws IOException {
    String piece = Storage.path(dir, pieceName(segment));
    if (storage.exists(piece)) {
      return piece;
    }
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = SORTING.putIfAbsent(piece, mine);
    if (running != null) {
      try {
        running.join();
      } catch (java.util.concurrent.CompletionException e) {
        // That sort failed; try on our own below.
      }
      if (storage.exists(piece)) {
        return piece;
      }
      return ensureSorted(storage, dir, segment, last);
    }
    try {
      if (!storage.exists(piece)) {
        sort(storage, Storage.path(dir, segment), piece, last);
      }
      mine.complete(null);
      return piece;
    } catch (IOException | RuntimeException e) {
      mine.completeExceptionally(e);
      throw e;
    } finally {
      SORTING.remove(piece, mine);
    }
  }

  /** The path of the piece of the segment at {@code segmentPath}. */
  static String pieceOf(String segmentPath) {
    String name = segmentPath.substring(segmentPath.lastIndexOf('/') + 1);
    return Storage.path(Storage.parent(segmentPath), pieceName(name));
  }

  static String pieceName(String segment) {
    return segment.substring(0, segment.length() - CommitLogFormat.SUFFIX.length()) + SUFFIX;
  }

  /**
   * Sorts the segment at {@code segmentPath} into the piece at {@code piece} (see the class
   * comment). The segment is checked whole first ({@link LogReader}); each run is then the
   * tablet's records copied as they are framed in the segment, so nothing is decoded or
   * re-encoded.
   */
  static void sort(Storage storage, String segmentPath, String piece, boolean last) throws IOException {
    byte[] segment = LogReader.readAll(storage, segmentPath);
    long validEnd = LogReader.read(segmentPath, segment, last, null).validEnd();
    Map<String, List<int[]>> spans = new TreeMap<>(); // tablet -> {offset, length} of each record, in log order
    Map<String, long[]> counts = new TreeMap<>(); // tablet -> {records, max sequence}
    int pos = CommitLogFormat.HEADER_SIZE;
    while (pos < validEnd) {
      int end = pos + CommitLogFormat.BATCH_HEADER_SIZE
          + ByteSink.getIntAt(segment, pos + CommitLogFormat.BATCH_LENGTH);
      for (int r = pos + CommitLogFormat.BATCH_HEADER_SIZE; r < end; ) {
        int length = CommitLogFormat.RECORD_BODY + ByteSink.getIntAt(segment, r + CommitLogFormat.RECORD_LENGTH);
        ByteBuffer in = ByteBuffer.wrap(segment, r + CommitLogFormat.RECORD_BODY + 1,
            length - CommitLogFormat.RECORD_BODY - 1);
        int idLen = io.tabula.persistence.encoding.VarInts.getVarInt(in);
        String id = new String(segment, in.position(), idLen, StandardCharsets.UTF_8);
        long seq = ByteSink.getLongAt(segment, in.position() + idLen);
        spans.computeIfAbsent(id, k -> new ArrayList<>()).add(new int[] {r, length});
        long[] c = counts.computeIfAbsent(id, k -> new long[] {0, Long.MIN_VALUE});
        c[0]++;
        c[1] = Math.max(c[1], seq);
        r += length;
      }
      pos = end;
    }
    String tmp = piece + ".tmp-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    try {
      try (WritableFile w = storage.createNewInFolder(tmp)) { // never makes the log's folder again
        byte[] header = new byte[HEADER_SIZE];
        ByteSink.putLongAt(header, 0, MAGIC);
        ByteSink.putIntAt(header, 8, VERSION);
        ByteSink.putIntAt(header, 12, LogRecords.crc(header, 0, 12));
        w.append(header);
        ByteSink index = new ByteSink(256);
        index.putInt(spans.size());
        ByteSink buffer = new ByteSink(1 << 20); // one write per MiB, not per record
        for (Map.Entry<String, List<int[]>> r : spans.entrySet()) {
          long offset = w.position() + buffer.size();
          for (int[] span : r.getValue()) {
            if (buffer.size() + span[1] > (1 << 20)) {
              w.append(buffer.array(), 0, buffer.size());
              buffer.reset();
            }
            buffer.put(segment, span[0], span[1]);
          }
          long[] c = counts.get(r.getKey());
          index.putLengthPrefixed(r.getKey().getBytes(StandardCharsets.UTF_8)).putLong(offset)
              .putLong(w.position() + buffer.size() - offset).putLong(c[0]).putLong(c[1]);
        }
        w.append(buffer.array(), 0, buffer.size());
        long indexOffset = w.position();
        w.append(index.array(), 0, index.size());
        byte[] footer = new byte[FOOTER_SIZE];
        ByteSink.putLongAt(footer, 0, indexOffset);
        ByteSink.putIntAt(footer, 8, index.size());
        ByteSink.putIntAt(footer, 12, LogRecords.crc(index.array(), 0, index.size()));
        w.append(footer);
        w.sync();
      }
      storage.renameIfAbsent(tmp, piece);
      storage.syncDirectory(Storage.parent(piece));
    } finally {
      if (storage.exists(tmp)) {
        storage.delete(tmp);
      }
    }
  }

  /** The runs of the piece at {@code piece}, by tablet id, checked against the footer's CRC. */
  static Map<String, Run> index(ReadableFile f, String piece) throws IOException {
    long size = f.size();
    if (size < HEADER_SIZE + FOOTER_SIZE + 4) {
      throw new CorruptionException(piece, 0, "a sorted piece of " + size + " bytes is too short");
    }
    byte[] header = f.readFully(0, HEADER_SIZE);
    if (ByteSink.getLongAt(header, 0) != MAGIC || ByteSink.getIntAt(header, 8) != VERSION
        || ByteSink.getIntAt(header, 12) != LogRecords.crc(header, 0, 12)) {
      throw new CorruptionException(piece, 0, "bad header of a sorted piece");
    }
    byte[] footer = f.readFully(size - FOOTER_SIZE, FOOTER_SIZE);
    long indexOffset = ByteSink.getLongAt(footer, 0);
    int indexLength = ByteSink.getIntAt(footer, 8);
    if (indexOffset < HEADER_SIZE || indexLength < 4 || indexOffset + indexLength != size - FOOTER_SIZE) {
      throw new CorruptionException(piece, size - FOOTER_SIZE, "bad footer of a sorted piece");
    }
    byte[] index = f.readFully(indexOffset, indexLength);
    if (LogRecords.crc(index, 0, indexLength) != ByteSink.getIntAt(footer, 12)) {
      throw new CorruptionException(piece, indexOffset, "the index of a sorted piece fails its CRC");
    }
    ByteBuffer in = ByteBuffer.wrap(index);
    int count = in.getInt();
    Map<String, Run> runs = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      int idLen = io.tabula.persistence.encoding.VarInts.getVarInt(in);
      byte[] id = new byte[idLen];
      in.get(id);
      String tablet = new String(id, StandardCharsets.UTF_8);
      Run r = new Run(tablet, in.getLong(), in.getLong(), in.getLong(), in.getLong());
      if (r.offset() < HEADER_SIZE || r.offset() + r.length() > indexOffset) {
        throw new CorruptionException(piece, indexOffset, "the run of tablet " + tablet + " lies outside the piece");
      }
      runs.put(tablet, r);
    }
    return runs;
  }

  /** Delivers the records of {@code tabletId}'s run in the piece at {@code piece}; returns how many. */
  static long readRun(Storage storage, String piece, String tabletId, RecordVisitor visitor) throws IOException {
    try (ReadableFile f = storage.open(piece)) {
      Run run = index(f, piece).get(tabletId);
      if (run == null) {
        return 0;
      }
      if (run.length() > Integer.MAX_VALUE - 64) {
        throw new CorruptionException(piece, run.offset(), "a run of " + run.length() + " bytes");
      }
      byte[] b = f.readFully(run.offset(), (int) run.length());
      long records = 0;
      int pos = 0;
      while (pos < b.length) {
        int body = pos + CommitLogFormat.RECORD_BODY <= b.length ? ByteSink.getIntAt(b, pos) : -1;
        if (body < CommitLogFormat.MIN_BODY || body > b.length - pos - CommitLogFormat.RECORD_BODY
            || ByteSink.getIntAt(b, pos + CommitLogFormat.RECORD_CRC) != LogRecords.recordCrc(b, pos, body)) {
          throw new CorruptionException(piece, run.offset() + pos, "a damaged record in the run of tablet "
              + tabletId);
        }
        ByteBuffer in = ByteBuffer.wrap(b, pos + CommitLogFormat.RECORD_BODY + 1, body - 1);
        int idLen = io.tabula.persistence.encoding.VarInts.getVarInt(in);
        in.position(in.position() + idLen);
        long seq = in.getLong();
        byte[] payload = new byte[in.remaining()];
        in.get(payload);
        visitor.record(tabletId, seq, payload);
        records++;
        pos += CommitLogFormat.RECORD_BODY + body;
      }
      if (records != run.records()) {
        throw new CorruptionException(piece, run.offset(), "the run of tablet " + tabletId + " holds " + records
            + " records, its index says " + run.records());
      }
      return records;
    }
  }
}
