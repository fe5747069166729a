package io.tabula.streams.filter;

import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.ByteString;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Row;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Rows, filters and a compact rendering of filter output for the filter tests. */
final class Fixtures {
  private Fixtures() {}

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static ByteString bs(String s) {
    return ByteString.copyFromUtf8(s);
  }

  static Cell cell(String family, String qualifier, long ts, String value) {
    return new Cell(family, b(qualifier), ts, b(value));
  }

  /**
   * The row most tests use, in engine order: three versions of f1:a, one of f1:b, and two
   * columns in f2.
   */
  static Row sample() {
    return new Row(b("row1"), List.of(
        cell("f1", "a", 30, "v1"),
        cell("f1", "a", 20, "v2"),
        cell("f1", "a", 10, "v3"),
        cell("f1", "b", 20, "x"),
        cell("f2", "a", 5, "y"),
        cell("f2", "c", 7, "")));
  }

  /** Cells as "family:qualifier@ts=value" plus "[label]"s, space separated. */
  static String render(FilteredRow row) {
    List<String> parts = new ArrayList<>();
    for (LabeledCell c : row.cells()) {
      StringBuilder s = new StringBuilder()
          .append(c.family()).append(':').append(new String(c.qualifier(), StandardCharsets.ISO_8859_1))
          .append('@').append(c.timestamp()).append('=').append(new String(c.value(), StandardCharsets.ISO_8859_1));
      for (String l : c.labels()) {
        s.append('[').append(l).append(']');
      }
      parts.add(s.toString());
    }
    return String.join(" ", parts);
  }

  static String run(RowFilter f, Row row) {
    return render(RowFilters.compile(f).apply(row));
  }

  static String run(RowFilter f) {
    return run(f, sample());
  }

  static RowFilter chain(RowFilter... fs) {
    return RowFilter.newBuilder().setChain(RowFilter.Chain.newBuilder().addAllFilters(List.of(fs))).build();
  }

  static RowFilter interleave(RowFilter... fs) {
    return RowFilter.newBuilder().setInterleave(RowFilter.Interleave.newBuilder().addAllFilters(List.of(fs))).build();
  }

  static RowFilter condition(RowFilter predicate, RowFilter onTrue, RowFilter onFalse) {
    RowFilter.Condition.Builder c = RowFilter.Condition.newBuilder().setPredicateFilter(predicate);
    if (onTrue != null) {
      c.setTrueFilter(onTrue);
    }
    if (onFalse != null) {
      c.setFalseFilter(onFalse);
    }
    return RowFilter.newBuilder().setCondition(c).build();
  }

  static RowFilter label(String l) {
    return RowFilter.newBuilder().setApplyLabelTransformer(l).build();
  }

  static RowFilter family(String regex) {
    return RowFilter.newBuilder().setFamilyNameRegexFilter(regex).build();
  }

  static RowFilter qualifier(String regex) {
    return RowFilter.newBuilder().setColumnQualifierRegexFilter(bs(regex)).build();
  }

  static RowFilter value(String regex) {
    return RowFilter.newBuilder().setValueRegexFilter(bs(regex)).build();
  }

  static RowFilter rowKey(String regex) {
    return RowFilter.newBuilder().setRowKeyRegexFilter(bs(regex)).build();
  }

  static RowFilter columnLimit(int n) {
    return RowFilter.newBuilder().setCellsPerColumnLimitFilter(n).build();
  }

  static RowFilter rowLimit(int n) {
    return RowFilter.newBuilder().setCellsPerRowLimitFilter(n).build();
  }

  static RowFilter rowOffset(int n) {
    return RowFilter.newBuilder().setCellsPerRowOffsetFilter(n).build();
  }

  static RowFilter passAll() {
    return RowFilter.newBuilder().setPassAllFilter(true).build();
  }

  static RowFilter blockAll() {
    return RowFilter.newBuilder().setBlockAllFilter(true).build();
  }

  static RowFilter sink() {
    return RowFilter.newBuilder().setSink(true).build();
  }

  static RowFilter strip() {
    return RowFilter.newBuilder().setStripValueTransformer(true).build();
  }
}
