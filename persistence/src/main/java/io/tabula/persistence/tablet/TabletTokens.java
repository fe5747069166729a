package io.tabula.persistence.tablet;

import io.tabula.persistence.compaction.TabletTokensWindow;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.iterator.MergingIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.schema.LocalityGroup;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Idempotency tokens in a tablet (docs/aggregates.md, "Idempotency"): a row mutation that
 * carries a {@link Mutation.Token} writes it into its row with the rest, atomically and through
 * the commit log, so it survives a crash, a move and a split as the row's cells do, and a
 * compaction keeps it for {@link TabletTokensWindow#MICROS}. Before applying such a row
 * mutation, its writer asks {@link #seen}; writers of one row must take turns between that
 * question and their write (the tablet actor's row gate does), or two retries could both find
 * the token missing. Stateless.
 */
public final class TabletTokens {
  private TabletTokens() {}

  /** The token {@code rm} carries, or null. */
  public static byte[] of(RowMutation rm) {
    for (Mutation m : rm.mutations()) {
      if (m instanceof Mutation.Token t) {
        return t.token();
      }
    }
    return null;
  }

  /**
   * Whether {@code row} of {@code tablet} holds {@code token}, written by a row mutation now
   * visible and less than {@link TabletTokensWindow#MICROS} ago. May read SSTables: call it
   * off any thread that must not block.
   */
  public static boolean seen(Tablet tablet, byte[] row, byte[] token) throws IOException {
    if (!tablet.containsRow(row)) {
      throw new TabletUnavailableException("row " + ByteArrays.show(row) + " is outside tablet " + tablet.id());
    }
    long snapshot = tablet.visibleSequence();
    long oldest = tablet.env.clock().nowMicros() - TabletTokensWindow.MICROS;
    TabletVersion v = tablet.acquire();
    try {
      List<CellIterator> its = new ArrayList<>();
      its.add(v.active.iterator());
      for (TabletVersion.Frozen f : v.frozen) {
        its.add(f.memtable().iterator());
      }
      // a token has no family, so it is stored with the default group's entries
      for (SSTableHandle h : v.files(LocalityGroup.DEFAULT_NAME)) {
        if (h.reader().mayContainRow(row)) {
          its.add(h.reader().iterator());
        }
      }
      try (CellIterator it = new MergingIterator(its)) {
        for (it.seek(CellKey.firstOfToken(row, token)); it.valid(); it.next()) {
          CellKey k = it.key();
          if (k.kind() != CellKind.TOKEN || !Arrays.equals(k.row(), row) || !Arrays.equals(k.qualifier(), token)) {
            return false;
          }
          if (k.sequence() <= snapshot) {
            return k.timestamp() >= oldest; // the newest visible write of the token
          }
        }
        return false;
      }
    } finally {
      v.release();
    }
  }
}
