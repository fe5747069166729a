package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.encoding.MutationCodec;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.Tombstones;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The memtable entries of a {@link RowMutation}: mutation {@code i} gets sequence {@code
 * base + i}, so later mutations of one row mutation win over earlier ones, and the whole
 * row mutation becomes visible at once when the tablet's visible sequence passes {@code
 * base + size - 1}.
 */
final class MutationEntries {
  private MutationEntries() {}

  interface Sink {
    void add(CellKey key, byte[] value);
  }

  static void forEach(RowMutation rm, long base, Sink sink) {
    byte[] row = rm.row();
    List<Mutation> ms = rm.mutations();
    for (int i = 0; i < ms.size(); i++) {
      long seq = base + i;
      Mutation m = ms.get(i);
      if (m instanceof Mutation.SetCell s) {
        sink.add(CellKey.put(row, ByteArrays.utf8(s.family()), s.qualifier(), s.timestamp(), seq), s.value());
      } else if (m instanceof Mutation.DeleteFromColumn d) {
        sink.add(CellKey.of(row, ByteArrays.utf8(d.family()), d.qualifier(), 0, seq, CellKind.DELETE_COLUMN),
            Tombstones.encodeRange(d.startInclusive(), d.endExclusive()));
      } else if (m instanceof Mutation.DeleteFromFamily f) {
        sink.add(CellKey.of(row, ByteArrays.utf8(f.family()), ByteArrays.EMPTY, 0, seq, CellKind.DELETE_FAMILY),
            ByteArrays.EMPTY);
      } else if (m instanceof Mutation.MergeToCell mc) {
        sink.add(CellKey.of(row, ByteArrays.utf8(mc.family()), mc.qualifier(), mc.timestamp(), seq, CellKind.MERGE),
            mc.state());
      } else if (m instanceof Mutation.Token t) {
        sink.add(CellKey.of(row, ByteArrays.EMPTY, t.token(), t.timestamp(), seq, CellKind.TOKEN), ByteArrays.EMPTY);
      } else if (m instanceof Mutation.AddToCell) {
        throw new IllegalArgumentException("an AddToCell reaches the memtable as the MergeToCell of its operand: " + m);
      } else {
        sink.add(CellKey.of(row, ByteArrays.EMPTY, ByteArrays.EMPTY, 0, seq, CellKind.DELETE_ROW), ByteArrays.EMPTY);
      }
    }
  }

  /**
   * The row mutation with every {@link Mutation#SERVER_TIME} replaced by the time {@code
   * clock} gives, read only if some mutation needs it, and that time (or {@link
   * MutationCodec.Logged#NO_SERVER_TIME}): what the commit log records.
   */
  static MutationCodec.Logged withServerTime(RowMutation rm, LongSupplier clock) {
    List<Mutation> out = null;
    long nowMicros = 0;
    List<Mutation> ms = rm.mutations();
    for (int i = 0; i < ms.size(); i++) {
      Mutation m = ms.get(i);
      boolean serverTime = m instanceof Mutation.SetCell s ? s.timestamp() == Mutation.SERVER_TIME
          : m instanceof Mutation.Token t && t.timestamp() == Mutation.SERVER_TIME;
      if (!serverTime) {
        continue;
      }
      if (out == null) {
        out = new ArrayList<>(ms);
        nowMicros = clock.getAsLong();
      }
      out.set(i, m instanceof Mutation.SetCell s ? new Mutation.SetCell(s.family(), s.qualifier(), nowMicros, s.value())
          : new Mutation.Token(((Mutation.Token) m).token(), nowMicros));
    }
    return out == null ? new MutationCodec.Logged(rm, MutationCodec.Logged.NO_SERVER_TIME)
        : new MutationCodec.Logged(new RowMutation(rm.row(), out), nowMicros);
  }
}
