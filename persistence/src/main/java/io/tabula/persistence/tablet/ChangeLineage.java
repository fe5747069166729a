package io.tabula.persistence.tablet;

import io.tabula.persistence.changes.ChangeLog;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.util.List;
import java.util.function.Predicate;

/**
 * Where a retired tablet's change stream goes on (docs/change-streams.md): a split parent's
 * manifest names its two children (the split's commit point); a merged parent's change log
 * names the merged tablet, which counts once the merge went through: the master's directory
 * has it, or an owner has opened it (only a merge the master recorded is ever opened). Stateless.
 */
public final class ChangeLineage {
  private ChangeLineage() {}

  /** A tablet a retired one's rows went to, its range, and the sequence its changes start after. */
  public record Successor(String tabletId, byte[] startRow, byte[] endRow, long startsAfter) {}

  /**
   * The tablets that took over tablet {@code tabletId}'s rows, or null while it is not retired
   * (served, moving, or in a merge not yet recorded). {@code inDirectory} tells whether the
   * master's directory has a tablet.
   *
   * @throws java.nio.file.NoSuchFileException if the tablet has no manifest (never made, or swept)
   */
  public static List<Successor> successors(Storage storage, String table, String tabletId,
      Predicate<String> inDirectory) throws IOException {
    String dir = Tablet.dirOf(table, tabletId);
    TabletManifest m = ManifestCodec.read(storage, dir);
    if (m.state() == TabletManifest.State.SPLIT) {
      TabletManifest.SplitInfo s = m.split();
      return List.of(new Successor(s.leftId(), m.startRow(), s.splitRow(), m.lastSequence()),
          new Successor(s.rightId(), s.splitRow(), m.endRow(), m.lastSequence()));
    }
    ChangeLog.Merged merged = ChangeLog.readMerged(storage, ChangeLog.folder(dir));
    if (merged != null && (inDirectory.test(merged.childId())
        || ManifestCodec.claimed(storage, Tablet.dirOf(table, merged.childId())))) {
      return List.of(new Successor(merged.childId(), merged.startRow(), merged.endRow(), merged.startsAfter()));
    }
    return null;
  }
}
