package io.tabula.client;

import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;

/**
 * The request that goes on with a scan after its stream broke: the same request minus
 * every row up to and including the last row delivered (from it down, when reversed),
 * with the row limit reduced by the rows delivered. Null when nothing is left to read.
 */
final class ScanResume {
  private ScanResume() {}

  static ReadRowsRequest after(ReadRowsRequest original, ByteString lastKey, long delivered) {
    if (lastKey == null) {
      return original;
    }
    long limit = original.getRowsLimit();
    if (limit > 0 && limit - delivered <= 0) {
      return null;
    }
    boolean reversed = original.getReversed();
    RowSet rows = original.getRows();
    RowSet.Builder left = RowSet.newBuilder();
    if (rows.getRowKeysCount() == 0 && rows.getRowRangesCount() == 0) {
      left.addRowRanges(reversed ? RowRange.newBuilder().setEndKeyOpen(lastKey)
          : RowRange.newBuilder().setStartKeyOpen(lastKey));
    }
    for (ByteString k : rows.getRowKeysList()) {
      int c = Bytes.compare(k, lastKey);
      if (reversed ? c < 0 : c > 0) {
        left.addRowKeys(k);
      }
    }
    for (RowRange r : rows.getRowRangesList()) {
      RowRange trimmed = reversed ? before(r, lastKey) : after(r, lastKey);
      if (trimmed != null) {
        left.addRowRanges(trimmed);
      }
    }
    if (left.getRowKeysCount() == 0 && left.getRowRangesCount() == 0) {
      return null;
    }
    return original.toBuilder().setRows(left).setRowsLimit(limit > 0 ? limit - delivered : 0).build();
  }

  /** The part of {@code r} after {@code last}, or null if none. */
  private static RowRange after(RowRange r, ByteString last) {
    boolean endsBefore = switch (r.getEndKeyCase()) {
      case END_KEY_OPEN -> !r.getEndKeyOpen().isEmpty() && Bytes.compare(r.getEndKeyOpen(), last) <= 0;
      case END_KEY_CLOSED -> Bytes.compare(r.getEndKeyClosed(), last) <= 0;
      case ENDKEY_NOT_SET -> false;
    };
    if (endsBefore) {
      return null;
    }
    ByteString start = switch (r.getStartKeyCase()) {
      case START_KEY_CLOSED -> r.getStartKeyClosed();
      case START_KEY_OPEN -> r.getStartKeyOpen();
      case STARTKEY_NOT_SET -> ByteString.EMPTY;
    };
    return Bytes.compare(start, last) > 0 ? r : r.toBuilder().setStartKeyOpen(last).build();
  }

  /** The part of {@code r} before {@code last}, or null if none. */
  private static RowRange before(RowRange r, ByteString last) {
    boolean startsAfter = switch (r.getStartKeyCase()) {
      case START_KEY_CLOSED -> Bytes.compare(r.getStartKeyClosed(), last) >= 0;
      case START_KEY_OPEN -> Bytes.compare(r.getStartKeyOpen(), last) >= 0;
      case STARTKEY_NOT_SET -> false;
    };
    if (startsAfter) {
      return null;
    }
    boolean endsBefore = switch (r.getEndKeyCase()) {
      case END_KEY_OPEN -> !r.getEndKeyOpen().isEmpty() && Bytes.compare(r.getEndKeyOpen(), last) <= 0;
      case END_KEY_CLOSED -> Bytes.compare(r.getEndKeyClosed(), last) < 0;
      case ENDKEY_NOT_SET -> false;
    };
    return endsBefore ? r : r.toBuilder().setEndKeyOpen(last).build();
  }
}
