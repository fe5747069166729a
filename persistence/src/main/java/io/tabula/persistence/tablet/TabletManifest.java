package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a tablet is made of on disk (paper §5.2 METADATA + §5.3 "redo points"): its row
 * range, its SSTables per locality group (newest first), and the redo point, the sequence
 * number up to which every write is in those SSTables, so reopening replays only the log
 * past it. Stored by {@link ManifestCodec}; layout in docs/formats/manifest.md.
 *
 * @param endRow exclusive end row; empty for "to the end of the table"
 * @param lastSequence the highest sequence number the tablet had assigned when this was written
 * @param maxServerTime the highest server-assigned timestamp (µs) the tablet had handed out when
 *     this was written, that it knew of; 0 for none ({@link ServerTimes})
 * @param split where and into what a {@link State#SPLIT} tablet was split; null otherwise
 */
public record TabletManifest(String table, String tabletId, byte[] startRow, byte[] endRow, State state,
    long redoPoint, long lastSequence, long maxServerTime, long nextFileNumber, Map<String, List<FileRef>> groups,
    SplitInfo split) {

  public TabletManifest {
    TreeMap<String, List<FileRef>> g = new TreeMap<>();
    groups.forEach((k, v) -> g.put(k, List.copyOf(v)));
    groups = java.util.Collections.unmodifiableSortedMap(g);
    if ((state == State.SPLIT) != (split != null)) {
      throw new IllegalArgumentException("a manifest has split details exactly when its state is SPLIT");
    }
    if (maxServerTime < 0) {
      throw new IllegalArgumentException("a server time is at least 0, was " + maxServerTime);
    }
  }

  /** Lifecycle state. The codes are stored: never renumber. */
  public enum State {
    /** Serving. */
    ACTIVE(1),
    /** Split into two children; never served again. */
    SPLIT(2);

    private final int code;

    State(int code) {
      this.code = code;
    }

    public int code() {
      return code;
    }

    static State fromCode(int code) {
      return switch (code) {
        case 1 -> ACTIVE;
        case 2 -> SPLIT;
        default -> null;
      };
    }
  }

  /**
   * One SSTable of the tablet. {@code owned}: created by this tablet, so its compactions may
   * delete it; a file inherited in a split is shared with the sibling and left for the
   * master's garbage collector (paper §6 mark-and-sweep).
   */
  public record FileRef(String path, boolean owned) {}

  /** The split point and the children's ids. */
  public record SplitInfo(byte[] splitRow, String leftId, String rightId) {
    @Override
    public boolean equals(Object o) {
      return o instanceof SplitInfo s && Arrays.equals(splitRow, s.splitRow) && leftId.equals(s.leftId)
          && rightId.equals(s.rightId);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(splitRow) * 31 + leftId.hashCode();
    }
  }

  /** A new, empty tablet. */
  public static TabletManifest empty(String table, String tabletId, byte[] startRow, byte[] endRow) {
    return new TabletManifest(table, tabletId, startRow, endRow, State.ACTIVE, 0, 0, 0, 1, Map.of(), null);
  }

  public List<FileRef> files(String group) {
    return groups.getOrDefault(group, List.of());
  }

  public boolean containsRow(byte[] row) {
    return ByteArrays.compare(row, startRow) >= 0 && (endRow.length == 0 || ByteArrays.compare(row, endRow) < 0);
  }

  /** This manifest with other files, redo point and counters. */
  public TabletManifest withFiles(Map<String, List<FileRef>> newGroups, long newRedo, long newLast,
      long newMaxServerTime, long newNextFile) {
    return new TabletManifest(table, tabletId, startRow, endRow, state, newRedo, newLast, newMaxServerTime,
        newNextFile, newGroups, null);
  }

  /** This tablet, retired by a split at {@code row} into the two named children. */
  public TabletManifest asSplit(SplitInfo info) {
    return new TabletManifest(table, tabletId, startRow, endRow, State.SPLIT, redoPoint, lastSequence,
        maxServerTime, nextFileNumber, groups, info);
  }

  /**
   * The manifests of the two children of a split tablet: each covers its half of the row
   * range and references every parent file as shared; no data is rewritten (paper §6). Each
   * carries on the parent's sequence numbers and server times.
   */
  public List<TabletManifest> children() {
    if (split == null) {
      throw new IllegalStateException("tablet " + tabletId + " is not split");
    }
    Map<String, List<FileRef>> shared = new TreeMap<>();
    groups.forEach((g, files) -> {
      List<FileRef> s = new ArrayList<>();
      files.forEach(f -> s.add(new FileRef(f.path(), false)));
      shared.put(g, s);
    });
    return List.of(
        new TabletManifest(table, split.leftId, startRow, split.splitRow, State.ACTIVE, lastSequence, lastSequence,
            maxServerTime, 1, shared, null),
        new TabletManifest(table, split.rightId, split.splitRow, endRow, State.ACTIVE, lastSequence, lastSequence,
            maxServerTime, 1, shared, null));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TabletManifest m && table.equals(m.table) && tabletId.equals(m.tabletId)
        && Arrays.equals(startRow, m.startRow) && Arrays.equals(endRow, m.endRow) && state == m.state
        && redoPoint == m.redoPoint && lastSequence == m.lastSequence && maxServerTime == m.maxServerTime
        && nextFileNumber == m.nextFileNumber && groups.equals(m.groups) && java.util.Objects.equals(split, m.split);
  }

  @Override
  public int hashCode() {
    return tabletId.hashCode() * 31 + Long.hashCode(redoPoint);
  }
}
