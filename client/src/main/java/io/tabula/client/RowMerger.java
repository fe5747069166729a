package io.tabula.client;

import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.ReadRowsResponse.CellChunk;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;

/**
 * Rebuilds whole rows from the cell chunks of a ReadRows stream, following the v2 chunk
 * grammar: a row's first chunk carries its key, a chunk names its family and qualifier
 * only when they change, a value may be split over chunks ({@code value_size} > 0 on all
 * but the last), {@code reset_row} drops the row so far and {@code commit_row} completes
 * it. A stream that breaks the grammar fails with INTERNAL. One instance per stream; not
 * thread-safe.
 */
final class RowMerger {
  private ByteString rowKey;
  private ByteString lastCommitted;
  private final List<Cell> cells = new ArrayList<>();
  private String family;
  private ByteString qualifier;
  private long timestamp;
  private List<String> labels;
  /** The value of the cell being read, or null between cells. */
  private ByteString value;
  private final boolean reversed;

  RowMerger(boolean reversed) {
    this.reversed = reversed;
  }

  /** The rows completed by this response, in stream order. */
  List<Row> accept(ReadRowsResponse response) {
    List<Row> done = new ArrayList<>(1);
    for (CellChunk c : response.getChunksList()) {
      Row r = chunk(c);
      if (r != null) {
        done.add(r);
      }
    }
    return done;
  }

  /** Checks that the stream did not end inside a row. */
  void finish() {
    if (rowKey != null) {
      throw malformed("the stream ended inside row " + rowKey.toStringUtf8());
    }
  }

  private Row chunk(CellChunk c) {
    if (c.getResetRow()) {
      if (rowKey == null || c.hasFamilyName() || c.hasQualifier() || !c.getValue().isEmpty() || c.getCommitRow()) {
        throw malformed("a reset_row chunk must stand alone inside a row");
      }
      clear();
      return null;
    }
    if (rowKey == null) {
      if (c.getRowKey().isEmpty()) {
        throw malformed("a row's first chunk has no row key");
      }
      if (lastCommitted != null && (reversed ? Bytes.compare(c.getRowKey(), lastCommitted) >= 0
          : Bytes.compare(c.getRowKey(), lastCommitted) <= 0)) {
        throw malformed("row " + c.getRowKey().toStringUtf8() + " is out of order");
      }
      rowKey = c.getRowKey();
    } else if (!c.getRowKey().isEmpty() && !c.getRowKey().equals(rowKey)) {
      throw malformed("a new row key arrived before row " + rowKey.toStringUtf8() + " was committed");
    }
    if (value == null) {
      startCell(c);
    }
    value = value.concat(c.getValue());
    if (c.getValueSize() == 0) {
      cells.add(new Cell(family, qualifier, timestamp, value, labels));
      value = null;
    }
    if (c.getCommitRow()) {
      if (value != null) {
        throw malformed("row " + rowKey.toStringUtf8() + " was committed inside a split value");
      }
      Row row = new Row(rowKey, cells);
      lastCommitted = rowKey;
      clear();
      return row;
    }
    return null;
  }

  private void startCell(CellChunk c) {
    if (c.hasFamilyName()) {
      family = c.getFamilyName().getValue();
      if (!c.hasQualifier()) {
        throw malformed("a chunk with a new family has no qualifier");
      }
    }
    if (c.hasQualifier()) {
      qualifier = c.getQualifier().getValue();
    }
    if (family == null || qualifier == null) {
      throw malformed("a cell of row " + rowKey.toStringUtf8() + " has no family or qualifier");
    }
    timestamp = c.getTimestampMicros();
    labels = c.getLabelsCount() == 0 ? List.of() : List.copyOf(c.getLabelsList());
    value = ByteString.EMPTY;
  }

  private void clear() {
    rowKey = null;
    cells.clear();
    family = null;
    qualifier = null;
    value = null;
  }

  private static TabulaException malformed(String what) {
    return new TabulaException(Status.Code.INTERNAL, "malformed ReadRows stream: " + what);
  }
}
