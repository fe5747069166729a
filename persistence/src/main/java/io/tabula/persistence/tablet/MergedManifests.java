package io.tabula.persistence.tablet;

import io.tabula.persistence.changes.ChangeLog;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The manifest of a tablet made by merging two adjacent ones (paper §5: "two existing tablets
 * are merged"), written by {@link TabletServer#writeMergedManifest}. Stateless.
 */
final class MergedManifests {
  private MergedManifests() {}

  /**
   * Writes the manifest of tablet {@code childId}, the merge of the adjacent tablets
   * {@code leftId} and {@code rightId} of {@code table} (paper §5: "two existing tablets are
   * merged"): their row ranges joined, their SSTables referenced as they are (shared, not
   * owned: nothing is rewritten, except a parent that shares files of its own, which is
   * compacted first: {@link #ownFiles}), and a redo point past both parents' sequences, so the child
   * replays nothing and its new writes come after every cell it inherits, and the higher of
   * their highest server times, so its own are never below either's. Both parents must
   * be closed cleanly here (flushed) and stay closed; their manifests are left as they were,
   * and the master's directory decides which tablets exist. Blocks on file I/O.
   *
   * @return the child's manifest
   */
  static TabletManifest write(TabletServer server, Storage storage, String table, String leftId, String rightId,
      String childId) throws IOException {
    if (server.tablet(leftId) != null || server.tablet(rightId) != null) {
      throw new IllegalStateException("tablets " + leftId + " and " + rightId + " must be closed to merge");
    }
    TabletManifest left = ManifestCodec.read(storage, Tablet.dirOf(table, leftId));
    TabletManifest right = ManifestCodec.read(storage, Tablet.dirOf(table, rightId));
    if (left.state() != TabletManifest.State.ACTIVE || right.state() != TabletManifest.State.ACTIVE
        || left.endRow().length == 0 || !java.util.Arrays.equals(left.endRow(), right.startRow())) {
      throw new IllegalStateException("tablets " + leftId + " and " + rightId + " are not adjacent active tablets");
    }
    left = ownFiles(server, storage, left);
    right = ownFiles(server, storage, right);
    Map<String, List<TabletManifest.FileRef>> groups = new java.util.TreeMap<>();
    for (TabletManifest parent : List.of(left, right)) {
      parent.groups().forEach((g, files) -> {
        List<TabletManifest.FileRef> shared = groups.computeIfAbsent(g, k -> new ArrayList<>());
        files.forEach(f -> shared.add(new TabletManifest.FileRef(f.path(), false)));
      });
    }
    long last = Math.max(left.lastSequence(), right.lastSequence());
    TabletManifest child = new TabletManifest(table, childId, left.startRow(), right.endRow(),
        TabletManifest.State.ACTIVE, last, last, Math.max(left.maxServerTime(), right.maxServerTime()), 1, groups,
        null);
    // A parent that keeps changes, or kept some, says where its change stream goes on: followed once the
    // child opens. One that never took a write has no change log folder yet; its readers need the marker
    // all the same, or they would wait for its successor forever.
    boolean keeps = server.keepsChanges(table);
    for (String parent : List.of(leftId, rightId)) {
      String folder = ChangeLog.folder(Tablet.dirOf(table, parent));
      if (keeps || storage.exists(folder)) {
        ChangeLog.writeMerged(storage, folder, new ChangeLog.Merged(childId, child.startRow(), child.endRow(), last));
      }
    }
    return ManifestCodec.create(storage, Tablet.dirOf(table, childId), child).manifest();
  }

  /**
   * {@code parent} (closed) once it holds only rows of its own range: a parent that still
   * shares a file (with a sibling after a split, or with the tablets of an earlier merge) is
   * opened here, compacted whole (which writes its rows alone into files it owns) and closed
   * again. Joined as it is, such a file would bring the merged tablet rows the parent does not
   * have any more: cells a sibling's compaction had dropped as deleted, or operands of an
   * aggregate cell it had folded, counted again. Blocks on file I/O.
   */
  private static TabletManifest ownFiles(TabletServer server, Storage storage, TabletManifest parent)
      throws IOException {
    boolean shares = parent.groups().values().stream().flatMap(List::stream).anyMatch(f -> !f.owned());
    if (!shares) {
      return parent;
    }
    Tablet t = server.openTablet(parent.table(), parent.tabletId(), parent.startRow(), parent.endRow(), List.of())
        .tablet();
    try {
      t.majorCompact().join();
    } finally {
      server.closeTablet(parent.tabletId());
    }
    return ManifestCodec.read(storage, Tablet.dirOf(parent.table(), parent.tabletId()));
  }
}
