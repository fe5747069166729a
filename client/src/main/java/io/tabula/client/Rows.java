package io.tabula.client;

import com.google.bigtable.v2.Column;
import com.google.bigtable.v2.Family;
import java.util.ArrayList;
import java.util.List;

/** Conversion of the nested v2 {@code Row} (families, columns, cells) that read-modify-write answers with. */
final class Rows {
  private Rows() {}

  static Row fromProto(com.google.bigtable.v2.Row row) {
    List<Cell> cells = new ArrayList<>();
    for (Family f : row.getFamiliesList()) {
      for (Column c : f.getColumnsList()) {
        for (com.google.bigtable.v2.Cell cell : c.getCellsList()) {
          cells.add(new Cell(f.getName(), c.getQualifier(), cell.getTimestampMicros(), cell.getValue(),
              cell.getLabelsList()));
        }
      }
    }
    return new Row(row.getKey(), cells);
  }
}
