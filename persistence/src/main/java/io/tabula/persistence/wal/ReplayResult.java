package io.tabula.persistence.wal;

import java.util.List;

/**
 * What a replay found.
 *
 * @param records valid records delivered
 * @param segments the segments read, in order
 * @param tornSegment the segment whose unfinished tail was dropped, or null if the log ended cleanly
 * @param tornOffset where the dropped tail starts
 * @param tornBytesSkipped how many bytes were dropped
 */
public record ReplayResult(long records, List<String> segments, String tornSegment, long tornOffset,
    long tornBytesSkipped) {
  public ReplayResult {
    segments = List.copyOf(segments);
  }

  public boolean clean() {
    return tornSegment == null;
  }
}
