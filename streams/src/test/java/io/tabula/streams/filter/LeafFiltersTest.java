package io.tabula.streams.filter;

import static io.tabula.streams.filter.Fixtures.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.ColumnRange;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.TimestampRange;
import com.google.bigtable.v2.ValueBitmask;
import com.google.bigtable.v2.ValueRange;
import com.google.protobuf.ByteString;
import io.tabula.persistence.model.Row;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Every non-composite filter kind, one behaviour per test, over {@link Fixtures#sample()}. */
class LeafFiltersTest {
  private static final String ALL = "f1:a@30=v1 f1:a@20=v2 f1:a@10=v3 f1:b@20=x f2:a@5=y f2:c@7=";

  @Test
  void unsetTopLevelFilterPassesEverything() {
    assertEquals(ALL, run(RowFilter.getDefaultInstance()));
  }

  @Test
  void passAllAndBlockAll() {
    assertEquals(ALL, run(passAll()));
    assertTrue(RowFilters.compile(blockAll()).apply(sample()).isEmpty());
  }

  @Test
  void rowKeyRegexMustMatchTheWholeKey() {
    assertEquals(ALL, run(rowKey("row\\d")));
    assertEquals("", run(rowKey("row")));
    assertEquals("", run(rowKey("ow1")));
    assertEquals(ALL, run(rowKey("r.*|x")));
  }

  @Test
  void rowSampleUsesTheInjectedRandomSourcePerEvaluation() {
    AtomicInteger draws = new AtomicInteger();
    double[] sequence = {0.1, 0.5, 0.29};
    RowFilter f = RowFilter.newBuilder().setRowSampleFilter(0.3).build();
    CompiledFilter c = RowFilters.compile(f, "filter", () -> sequence[draws.getAndIncrement()]);
    assertEquals(6, c.apply(sample()).cells().size());
    assertTrue(c.apply(sample()).isEmpty());
    assertEquals(6, c.apply(sample()).cells().size());
    assertEquals(3, draws.get());
  }

  @Test
  void familyRegexIsAFullMatchOverTheName() {
    assertEquals("f2:a@5=y f2:c@7=", run(family("f2")));
    assertEquals("", run(family("f")));
    assertEquals(ALL, run(family("f[12]")));
  }

  @Test
  void qualifierRegexIsAFullMatch() {
    assertEquals("f1:a@30=v1 f1:a@20=v2 f1:a@10=v3 f2:a@5=y", run(qualifier("a")));
    assertEquals("f1:b@20=x f2:c@7=", run(qualifier("[bc]")));
    assertEquals("", run(qualifier("")));
  }

  @Test
  void valueRegexIsAFullMatchAndEmptyPatternMatchesEmptyValue() {
    assertEquals("f1:a@30=v1 f1:a@20=v2 f1:a@10=v3", run(value("v\\d")));
    assertEquals("f2:c@7=", run(value("")));
    assertEquals("", run(value("v")));
  }

  @Test
  void columnRangeDefaultsAndBounds() {
    ColumnRange.Builder r = ColumnRange.newBuilder().setFamilyName("f1");
    assertEquals("f1:a@30=v1 f1:a@20=v2 f1:a@10=v3 f1:b@20=x", run(columnRange(r.build())));
    assertEquals("f1:b@20=x", run(columnRange(r.clone().setStartQualifierOpen(bs("a")).build())));
    assertEquals("f1:a@30=v1 f1:a@20=v2 f1:a@10=v3 f1:b@20=x",
        run(columnRange(r.clone().setStartQualifierClosed(bs("a")).setEndQualifierClosed(bs("b")).build())));
    assertEquals("f1:a@30=v1 f1:a@20=v2 f1:a@10=v3",
        run(columnRange(r.clone().setEndQualifierOpen(bs("b")).build())));
    assertEquals("f2:c@7=", run(columnRange(ColumnRange.newBuilder().setFamilyName("f2")
        .setStartQualifierOpen(bs("a")).build())));
    assertEquals("", run(columnRange(ColumnRange.newBuilder().setFamilyName("nope").build())));
  }

  @Test
  void columnRangeTakesASetEmptyEndLiterally() {
    ColumnRange r = ColumnRange.newBuilder().setFamilyName("f1").setEndQualifierOpen(ByteString.EMPTY).build();
    assertEquals("", run(columnRange(r)));
  }

  @Test
  void timestampRangeIsStartInclusiveEndExclusiveZeroEndUnbounded() {
    assertEquals("f1:a@20=v2 f1:a@10=v3 f1:b@20=x", run(timestamps(10, 30)));
    assertEquals("f1:a@30=v1 f1:a@20=v2 f1:b@20=x", run(timestamps(20, 0)));
    assertEquals(ALL, run(timestamps(0, 0)));
    assertEquals("", run(timestamps(20, 20)));
  }

  @Test
  void valueRangeComparesUnsignedBytes() {
    Row row = new Row(b("k"), List.of(
        new io.tabula.persistence.model.Cell("f", b("a"), 1, new byte[] {0x7F}),
        new io.tabula.persistence.model.Cell("f", b("b"), 1, new byte[] {(byte) 0x80}),
        new io.tabula.persistence.model.Cell("f", b("c"), 1, new byte[0])));
    RowFilter high = valueRange(ValueRange.newBuilder()
        .setStartValueClosed(ByteString.copyFrom(new byte[] {(byte) 0x80})).build());
    assertEquals("f:b@1=\u0080", run(high, row));
    RowFilter low = valueRange(ValueRange.newBuilder()
        .setEndValueOpen(ByteString.copyFrom(new byte[] {(byte) 0x80})).build());
    assertEquals("f:a@1=\u007f f:c@1=", run(low, row));
    RowFilter openStart = valueRange(ValueRange.newBuilder().setStartValueOpen(ByteString.EMPTY).build());
    assertEquals("f:a@1=\u007f f:b@1=\u0080", run(openStart, row));
  }

  @Test
  void valueRangeOverSample() {
    assertEquals("f1:a@20=v2 f1:a@10=v3",
        run(valueRange(ValueRange.newBuilder().setStartValueOpen(bs("v1")).setEndValueClosed(bs("v3")).build())));
  }

  @Test
  void valueBitmaskRequiresEqualLengthAndAllMaskBits() {
    Row row = new Row(b("k"), List.of(
        new io.tabula.persistence.model.Cell("f", b("a"), 1, new byte[] {(byte) 0xF3}),
        new io.tabula.persistence.model.Cell("f", b("b"), 1, new byte[] {0x02}),
        new io.tabula.persistence.model.Cell("f", b("c"), 1, new byte[] {(byte) 0xF3, 0})));
    RowFilter f = RowFilter.newBuilder().setValueBitmaskFilter(ValueBitmask.newBuilder()
        .setMask(ByteString.copyFrom(new byte[] {0x03}))).build();
    assertEquals("f:a@1=\u00f3", run(f, row));
  }

  @Test
  void cellsPerRowOffsetSkipsCellsNotColumns() {
    assertEquals("f1:b@20=x f2:a@5=y f2:c@7=", run(rowOffset(3)));
    assertEquals(ALL, run(rowOffset(0)));
    assertEquals("", run(rowOffset(6)));
    assertEquals("", run(rowOffset(100)));
  }

  @Test
  void cellsPerRowLimitKeepsTheFirstCells() {
    assertEquals("f1:a@30=v1 f1:a@20=v2", run(rowLimit(2)));
    assertEquals(ALL, run(rowLimit(6)));
    assertEquals("", run(rowLimit(0)));
  }

  @Test
  void cellsPerColumnLimitKeepsNewestVersionsOfEachColumn() {
    assertEquals("f1:a@30=v1 f1:b@20=x f2:a@5=y f2:c@7=", run(columnLimit(1)));
    assertEquals("f1:a@30=v1 f1:a@20=v2 f1:b@20=x f2:a@5=y f2:c@7=", run(columnLimit(2)));
  }

  @Test
  void cellsPerColumnLimitSeparatesSameQualifierInDifferentFamilies() {
    Row row = new Row(b("k"), List.of(cell("f1", "q", 2, "a"), cell("f1", "q", 1, "b"), cell("f2", "q", 2, "c")));
    assertEquals("f1:q@2=a f2:q@2=c", run(columnLimit(1), row));
  }

  @Test
  void stripValueEmptiesValuesAndKeepsEverythingElse() {
    assertEquals("f1:b@20= f2:a@5=", run(chain(interleave(timestamps(5, 6), qualifier("b")), strip())));
    assertEquals("f1:b@20=[l]", run(chain(qualifier("b"), label("l"), strip())));
  }

  @Test
  void applyLabelLabelsEveryCell() {
    assertEquals("f2:a@5=y[blue-1] f2:c@7=[blue-1]", run(chain(family("f2"), label("blue-1"))));
  }

  @Test
  void unsetTopLevelFilterReturnsTheRowCellsUnchanged() {
    Row row = sample();
    FilteredRow out = RowFilters.compile(RowFilter.getDefaultInstance()).apply(row);
    assertSame(row.key(), out.key());
    assertEquals(row.cells(), out.cells().stream().map(LabeledCell::cell).toList());
  }

  @Test
  void passAllFiltersGiveTheUnfilteredRow() {
    Row row = sample();
    FilteredRow unfiltered = FilteredRow.unfiltered(row);
    assertSame(row.key(), unfiltered.key());
    assertEquals(row.cells(), unfiltered.cells().stream().map(LabeledCell::cell).toList());
    assertTrue(unfiltered.cells().stream().allMatch(c -> c.labels().isEmpty()));
    assertEquals(unfiltered, RowFilters.compile(RowFilter.getDefaultInstance()).apply(row));
    assertEquals(unfiltered, RowFilters.compile(passAll()).apply(row));
    assertEquals(unfiltered, RowFilters.compile(chain(passAll(), passAll())).apply(row));
  }

  static RowFilter columnRange(ColumnRange r) {
    return RowFilter.newBuilder().setColumnRangeFilter(r).build();
  }

  static RowFilter valueRange(ValueRange r) {
    return RowFilter.newBuilder().setValueRangeFilter(r).build();
  }

  static RowFilter timestamps(long start, long end) {
    return RowFilter.newBuilder().setTimestampRangeFilter(TimestampRange.newBuilder()
        .setStartTimestampMicros(start).setEndTimestampMicros(end)).build();
  }
}
