package io.tabula.bench;

import io.tabula.persistence.changes.ChangeLog;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a table's change logs hold on a node's disk: the segments of every tablet of the table
 * ({@code tables/<table>/<tablet>/changes/*.chg} under the data directory,
 * docs/formats/change-log.md), their bytes, and the sequences they hold as their names say
 * (first to last), sequences in segments that overlap counted once per tablet. A tablet
 * gives one sequence to each mutation of a row mutation, so a write of one cell is one
 * sequence.
 *
 * @param tablets tablet folders of the table that hold a change log
 * @param segments segment files
 * @param bytes the segments' sizes together
 * @param sequences distinct sequences in segments, summed over tablets
 * @param perSegment each segment's sequences (last - first + 1), tablet by tablet in order:
 *     how much each flush wrote
 */
record ChangeLogFiles(int tablets, int segments, long bytes, long sequences, List<Long> perSegment) {
  /** Reads the folders of {@code table} under {@code dataDir} as they are now. */
  static ChangeLogFiles of(Path dataDir, String table) throws IOException {
    Storage storage = new FileStorage(dataDir);
    int tablets = 0;
    int segments = 0;
    long bytes = 0;
    long sequences = 0;
    List<Long> perSegment = new ArrayList<>();
    String tableDir = Storage.path("tables", table);
    for (String tablet : storage.list(tableDir)) {
      if (!Files.isDirectory(dataDir.resolve(tableDir).resolve(tablet))) {
        continue;
      }
      long reached = Long.MIN_VALUE; // the highest sequence counted in this tablet
      boolean any = false;
      for (ChangeLog.Segment s : ChangeLog.segments(storage, ChangeLog.folder(Storage.path(tableDir, tablet)))) {
        any = true;
        segments++;
        bytes += Files.size(dataDir.resolve(s.path()));
        perSegment.add(s.last() - s.first() + 1);
        long from = Math.max(s.first(), reached + 1); // segments come by first sequence
        if (s.last() >= from) {
          sequences += s.last() - from + 1;
          reached = s.last();
        }
      }
      tablets += any ? 1 : 0;
    }
    return new ChangeLogFiles(tablets, segments, bytes, sequences, List.copyOf(perSegment));
  }
}
