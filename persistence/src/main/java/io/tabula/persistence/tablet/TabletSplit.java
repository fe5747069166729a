package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Splitting a tablet (paper §6 "Exploiting immutability"): holds merges (waiting for a running
 * one, which commits first: no merge commits into a split tablet), stops taking writes, waits
 * for those in flight, flushes the memtable (so its changes are in its change log too: a
 * change stream reads the parent to its end, then the children), records the split in its
 * manifest (the commit point), and opens the two children, sharing the parent's SSTables. The
 * parent is closed afterwards; if the split fails, merges resume and it takes writes again.
 * Stateless.
 */
final class TabletSplit {
  private TabletSplit() {}

  static List<Tablet> split(Tablet t, byte[] row, String leftId, String rightId) throws IOException {
    if (ByteArrays.compare(row, t.startRow()) <= 0
        || (t.endRow().length > 0 && ByteArrays.compare(row, t.endRow()) >= 0)) {
      throw new IllegalArgumentException("split row " + ByteArrays.show(row) + " is not strictly inside tablet "
          + t.id());
    }
    t.holdMerges(true);
    try {
      return splitHoldingMerges(t, row, leftId, rightId);
    } catch (IOException | RuntimeException e) {
      t.holdMerges(false);
      throw e;
    }
  }

  private static List<Tablet> splitHoldingMerges(Tablet t, byte[] row, String leftId, String rightId)
      throws IOException {
    t.sequence().startSplit();
    try {
      TabletFlushes.join(t.freezeAndFlush());
      List<ManifestCodec.Versioned> children = t.fileSet().recordSplit(
          new TabletManifest.SplitInfo(row, leftId, rightId), t.nextSequenceSnapshot() - 1);
      if (t.changes().keeps()) {
        // A parent that never took a write has no change log yet; the folder keeps its manifest, which
        // names the children its readers go on to, from the master's sweep (FileSweeper).
        t.env.storage().createDirectories(t.changes().folder());
      }
      t.closeWithoutFlush();
      List<Tablet> out = new ArrayList<>();
      for (ManifestCodec.Versioned c : children) {
        out.add(Tablet.open(t.env, t.schema(), c));
      }
      return out;
    } catch (IOException | RuntimeException e) {
      t.sequence().splitFailed();
      throw e;
    }
  }
}
