package io.tabula.persistence.changes;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;

/**
 * One change of a tablet, as a change stream delivers it (docs/change-streams.md): a row
 * mutation as it was applied (server times resolved, an AddToCell as the MergeToCell of its
 * operand), the tablet sequence of its first mutation, and its commit time, the server time the
 * write took (whole milliseconds, in µs). Its mutations hold sequences {@link #sequence} to
 * {@link #lastSequence}; a tablet's changes never overlap and their commit times never fall as
 * their sequences grow (one actor applies a tablet's writes). Immutable.
 */
public record Change(long sequence, long commitMicros, RowMutation mutation) {
  /** Fixed bytes a change costs beside its row and values (object headers, references). */
  private static final int OVERHEAD = 96;

  public Change {
    if (sequence < 1) {
      throw new IllegalArgumentException("a change's sequence is at least 1, was " + sequence);
    }
    if (commitMicros < 0) {
      throw new IllegalArgumentException("a commit time is at least 0, was " + commitMicros);
    }
  }

  /** The sequence of its last mutation. */
  public long lastSequence() {
    return sequence + mutation.mutations().size() - 1;
  }

  /** About the heap bytes it holds: row, qualifiers and values, and overheads. */
  public long approximateBytes() {
    long n = OVERHEAD + mutation.row().length;
    for (Mutation m : mutation.mutations()) {
      n += OVERHEAD;
      if (m instanceof Mutation.SetCell s) {
        n += s.qualifier().length + s.value().length;
      } else if (m instanceof Mutation.MergeToCell mc) {
        n += mc.qualifier().length + mc.state().length;
      } else if (m instanceof Mutation.DeleteFromColumn d) {
        n += d.qualifier().length;
      }
    }
    return n;
  }
}
