package io.tabula.persistence.wal;

import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Reading a log folder's segments in order, by {@link LogReader}'s rules: the replay of a log
 * reopened by its own node (which cuts a torn tail off), and the read-only reading of a folder
 * another incarnation left. Stateless.
 */
final class LogReplay {
  private LogReplay() {}

  /**
   * Reads {@code segments} (paths, in order) of the folder {@code dir}, delivering each valid
   * record to {@code visitor} and each segment's highest sequence per tablet to
   * {@code summaries}; a torn tail is reported and cut off its segment.
   */
  static ReplayResult replay(Storage storage, String dir, List<String> segments, RecordVisitor visitor,
      BiConsumer<String, Map<String, Long>> summaries) throws IOException {
    long records = 0;
    String torn = null;
    long tornOffset = 0;
    long tornBytes = 0;
    int last = LogReader.lastWithData(storage, segments);
    for (int i = 0; i < segments.size(); i++) {
      String path = segments.get(i);
      byte[] bytes = LogReader.readAll(storage, path);
      LogReader.SegmentSummary s = LogReader.read(path, bytes, i >= last, visitor);
      records += s.records();
      if (s.validEnd() < s.tornEnd()) {
        torn = path;
        tornOffset = s.validEnd();
        tornBytes = s.tornEnd() - s.validEnd();
        cutTornTail(storage, dir, path, bytes, (int) s.validEnd());
      }
      summaries.accept(path, s.maxSequence());
    }
    return new ReplayResult(records, segments, torn, tornOffset, tornBytes);
  }

  /** See {@link CommitLog#readFolder}. */
  static long readFolder(Storage storage, String dir, RecordVisitor visitor) throws IOException {
    List<String> paths = LogPieces.segmentPathsToRecover(storage, dir);
    int last = LogReader.lastWithData(storage, paths);
    long records = 0;
    for (int i = 0; i < paths.size(); i++) {
      String path = paths.get(i);
      records += LogReader.read(path, LogReader.readAll(storage, path), i >= last, visitor).records();
    }
    return records;
  }

  /**
   * Replaces a segment with its valid prefix, so that once newer segments exist the torn
   * tail is not mistaken for corruption in a sealed segment. Crash-safe: the prefix is
   * written and synced under a temporary name, then renamed over the segment.
   */
  private static void cutTornTail(Storage storage, String dir, String path, byte[] bytes, int validEnd)
      throws IOException {
    String tmp = path + ".cut";
    storage.delete(tmp); // one a crash left
    try (WritableFile w = storage.createNewInFolder(tmp)) { // never makes the log's folder again
      w.append(bytes, 0, validEnd);
      w.sync();
    }
    storage.rename(tmp, path);
    storage.syncDirectory(dir);
  }
}
