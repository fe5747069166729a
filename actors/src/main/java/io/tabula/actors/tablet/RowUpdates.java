package io.tabula.actors.tablet;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Computes the cells a read-modify-write writes, from the row as it is: each rule reads
 * the newest version of its column (as changed by earlier rules of the same request) and
 * writes the result at {@code max(now, newest timestamp)}, so the new value is the newest.
 * Plain logic, no I/O.
 */
final class RowUpdates {
  private RowUpdates() {}

  /**
   * The new cells, one per column touched, in rule order of first touch.
   *
   * @throws io.tabula.protocol.errors.Refused FAILED_PRECONDITION for a rule that cannot apply
   *     (an increment of a value that is not 8 bytes)
   */
  static List<Cell> apply(Row current, List<ReadModifyWriteRule> rules, long nowMicros) {
    Map<String, Cell> latest = new LinkedHashMap<>();
    if (current != null) {
      for (Cell c : current.cells()) {
        latest.putIfAbsent(key(c.family(), c.qualifier()), c);
      }
    }
    Map<String, Cell> written = new LinkedHashMap<>();
    for (int i = 0; i < rules.size(); i++) {
      ReadModifyWriteRule r = rules.get(i);
      String k = key(r.family(), r.qualifier());
      Cell old = written.containsKey(k) ? written.get(k) : latest.get(k);
      long ts = Math.max(nowMicros, old == null ? 0 : old.timestamp());
      byte[] value;
      if (r instanceof ReadModifyWriteRule.Append a) {
        byte[] base = old == null ? new byte[0] : old.value();
        value = Arrays.copyOf(base, base.length + a.suffix().length);
        System.arraycopy(a.suffix(), 0, value, base.length, a.suffix().length);
      } else {
        ReadModifyWriteRule.Increment inc = (ReadModifyWriteRule.Increment) r;
        long base = 0;
        if (old != null) {
          if (old.value().length != 8) {
            throw Refusal.of(ErrorCode.FAILED_PRECONDITION, "rules[" + i + "].increment_amount: the value of "
                + r.family() + ":" + ByteArrays.show(r.qualifier()) + " is " + old.value().length
                + " bytes, not a 64-bit big-endian integer").exception();
          }
          base = ByteBuffer.wrap(old.value()).getLong();
        }
        value = ByteBuffer.allocate(8).putLong(base + inc.delta()).array();
      }
      written.put(k, new Cell(r.family(), r.qualifier(), ts, value));
    }
    List<Cell> out = new ArrayList<>(written.values());
    out.sort((a, b) -> {
      int c = a.family().compareTo(b.family());
      return c != 0 ? c : ByteArrays.compare(a.qualifier(), b.qualifier());
    });
    return out;
  }

  static List<Mutation> asMutations(List<Cell> cells) {
    return cells.stream().<Mutation>map(c -> new Mutation.SetCell(c.family(), c.qualifier(), c.timestamp(),
        c.value())).toList();
  }

  private static String key(String family, byte[] qualifier) {
    return family + ":" + HexFormat.of().formatHex(qualifier);
  }
}
