package io.tabula.cluster.grpc;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.bigtable.v2.ReadRowsResponse.CellChunk;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import com.google.protobuf.StringValue;
import com.google.protobuf.UnsafeByteOperations;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Row;
import io.tabula.streams.filter.FilteredRow;
import io.tabula.streams.filter.LabeledCell;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Rows to the ReadRows wire form: one chunk per cell, the row key on the row's first chunk,
 * the family when it changes, the qualifier on every chunk, and commit_row on the last.
 * The official clients rebuild rows from exactly this. Keys, qualifiers and values are
 * wrapped, not copied: the engine's rows are immutable.
 */
final class Chunks {
  private Chunks() {}

  /**
   * Family names as messages, kept: a message remembers its encoded size, and a fresh one
   * per row meant measuring the name's UTF-8 again for every row of a scan. Families are few
   * (a table's schema names them).
   */
  private static final Cache<String, StringValue> FAMILY_NAMES = Caffeine.newBuilder().maximumSize(4096).build();

  private static StringValue familyName(String family) {
    return FAMILY_NAMES.get(family, StringValue::of);
  }

  /** About the bytes {@code row} takes in a response: key, qualifiers and values. */
  static long weight(FilteredRow row) {
    return row.approximateBytes();
  }

  /**
   * The qualifier message of the last cell added, reused while cells carry the very same
   * qualifier array (cells decoded from one block share it): a fresh message per cell had
   * its encoded size measured again for every cell, a tenth of a scan's CPU on the node.
   */
  private static final class Qualifiers {
    private byte[] last;
    private BytesValue message;

    BytesValue of(byte[] qualifier) {
      if (qualifier != last) {
        last = qualifier;
        message = BytesValue.of(UnsafeByteOperations.unsafeWrap(qualifier));
      }
      return message;
    }
  }

  private static ReadRowsResponse.Builder addRow(ReadRowsResponse.Builder b, FilteredRow row, Qualifiers qualifiers) {
    List<LabeledCell> cells = row.cells();
    String family = null;
    for (int i = 0; i < cells.size(); i++) {
      LabeledCell c = cells.get(i);
      CellChunk.Builder ch = CellChunk.newBuilder();
      if (i == 0) {
        ch.setRowKey(UnsafeByteOperations.unsafeWrap(row.key()));
      }
      if (!c.family().equals(family)) {
        family = c.family();
        ch.setFamilyName(familyName(family));
      }
      ch.setQualifier(qualifiers.of(c.qualifier()));
      ch.setTimestampMicros(c.timestamp());
      if (!c.labels().isEmpty()) {
        ch.addAllLabels(c.labels());
      }
      ch.setValue(UnsafeByteOperations.unsafeWrap(c.value()));
      if (i == cells.size() - 1) {
        ch.setCommitRow(true);
      }
      b.addChunks(ch);
    }
    return b;
  }

  /** About the bytes {@code rows} take in a response. */
  static long weight(List<FilteredRow> rows) {
    long n = 0;
    for (FilteredRow r : rows) {
      n += weight(r);
    }
    return n;
  }

  /** A response that starts with {@code rows}. */
  static ReadRowsResponse.Builder builder(List<FilteredRow> rows) {
    return addRows(ReadRowsResponse.newBuilder(), rows);
  }

  static ReadRowsResponse.Builder addRows(ReadRowsResponse.Builder b, List<FilteredRow> rows) {
    Qualifiers qualifiers = new Qualifiers();
    for (FilteredRow r : rows) {
      addRow(b, r, qualifiers);
    }
    return b;
  }

  /** Responses carrying {@code rows} in order, each of about {@code maxBytes} at most (at least one row). */
  static List<ReadRowsResponse> responses(List<FilteredRow> rows, long maxBytes) {
    List<ReadRowsResponse> out = new ArrayList<>();
    Qualifiers qualifiers = new Qualifiers();
    ReadRowsResponse.Builder b = null;
    long bytes = 0;
    for (FilteredRow row : rows) {
      long w = weight(row);
      if (b != null && bytes + w > maxBytes) {
        out.add(b.build());
        b = null;
      }
      if (b == null) {
        b = ReadRowsResponse.newBuilder();
        bytes = 0;
      }
      addRow(b, row, qualifiers);
      bytes += w;
    }
    if (b != null) {
      out.add(b.build());
    }
    return out;
  }

  /** A row in the shape ReadModifyWriteRow answers with: families, then columns, then cells. */
  static com.google.bigtable.v2.Row row(Row row) {
    com.google.bigtable.v2.Row.Builder out = com.google.bigtable.v2.Row.newBuilder()
        .setKey(ByteString.copyFrom(row.key()));
    com.google.bigtable.v2.Family.Builder fam = null;
    com.google.bigtable.v2.Column.Builder col = null;
    byte[] qualifier = null;
    for (Cell c : row.cells()) {
      if (fam == null || !fam.getName().equals(c.family())) {
        if (fam != null) {
          fam.addColumns(col);
          out.addFamilies(fam);
        }
        fam = com.google.bigtable.v2.Family.newBuilder().setName(c.family());
        col = null;
      }
      if (col == null || !Arrays.equals(qualifier, c.qualifier())) {
        if (col != null) {
          fam.addColumns(col);
        }
        qualifier = c.qualifier();
        col = com.google.bigtable.v2.Column.newBuilder().setQualifier(ByteString.copyFrom(qualifier));
      }
      col.addCells(com.google.bigtable.v2.Cell.newBuilder().setTimestampMicros(c.timestamp())
          .setValue(ByteString.copyFrom(c.value())));
    }
    if (fam != null) {
      fam.addColumns(col);
      out.addFamilies(fam);
    }
    return out.build();
  }
}
