package io.tabula.cluster.grpc;

import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import io.tabula.persistence.encoding.ByteArrays;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A ReadRows row set as sorted, disjoint half-open ranges {@code [start, end)} (an empty
 * end is unbounded): keys become one-row ranges, closed and open bounds become half-open
 * ones, and overlaps merge, so every row is read once and in order.
 */
final class RowRanges {
  /** One range; {@code single} when it holds exactly one row key. */
  record Range(byte[] start, byte[] end, boolean single) {}

  /**
   * The most row keys and ranges one row set may hold together: each is copied and sorted, so
   * their number bounds what one request costs the node.
   */
  static final int MAX_ROW_SET = 100_000;

  private RowRanges() {}

  static List<Range> of(RowSet set) {
    int n = set.getRowKeysCount() + set.getRowRangesCount();
    if (n > MAX_ROW_SET) {
      throw GrpcErrors.invalid("rows", "holds " + n + " row keys and ranges; at most " + MAX_ROW_SET
          + " are allowed in one request");
    }
    List<Range> rs = new ArrayList<>();
    if (set.getRowKeysCount() == 0 && set.getRowRangesCount() == 0) {
      rs.add(new Range(new byte[0], new byte[0], false));
      return rs;
    }
    for (int i = 0; i < set.getRowKeysCount(); i++) {
      ByteString k = set.getRowKeys(i);
      if (k.isEmpty()) {
        throw GrpcErrors.invalid("rows.row_keys[" + i + "]", "must not be empty");
      }
      byte[] key = k.toByteArray();
      rs.add(new Range(key, successor(key), true));
    }
    for (int i = 0; i < set.getRowRangesCount(); i++) {
      RowRange r = set.getRowRanges(i);
      byte[] start = switch (r.getStartKeyCase()) {
        case START_KEY_CLOSED -> r.getStartKeyClosed().toByteArray();
        case START_KEY_OPEN -> successor(r.getStartKeyOpen().toByteArray());
        default -> new byte[0];
      };
      byte[] end = switch (r.getEndKeyCase()) {
        case END_KEY_OPEN -> r.getEndKeyOpen().toByteArray();
        case END_KEY_CLOSED -> successor(r.getEndKeyClosed().toByteArray());
        default -> new byte[0];
      };
      boolean unboundedEnd = r.getEndKeyCase() == RowRange.EndKeyCase.ENDKEY_NOT_SET
          || (r.getEndKeyCase() == RowRange.EndKeyCase.END_KEY_OPEN && end.length == 0);
      if (unboundedEnd) {
        end = new byte[0];
      } else if (ByteArrays.compare(start, end) > 0) {
        throw GrpcErrors.invalid("rows.row_ranges[" + i + "]", "start key is after end key");
      } else if (ByteArrays.compare(start, end) == 0) {
        continue;
      }
      rs.add(new Range(start, end, false));
    }
    rs.sort((a, b) -> ByteArrays.compare(a.start(), b.start()));
    List<Range> merged = new ArrayList<>();
    for (Range r : rs) {
      if (!merged.isEmpty()) {
        Range last = merged.get(merged.size() - 1);
        if (last.end().length == 0 || ByteArrays.compare(r.start(), last.end()) < 0) {
          byte[] end = last.end().length == 0 || r.end().length == 0 ? new byte[0]
              : ByteArrays.compare(last.end(), r.end()) >= 0 ? last.end() : r.end();
          // Still one row only if it is the same row key asked twice.
          merged.set(merged.size() - 1, new Range(last.start(), end, last.single() && r.single()
              && Arrays.equals(r.start(), last.start())));
          continue;
        }
      }
      merged.add(r);
    }
    return merged;
  }

  static byte[] successor(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }
}
