package io.tabula.streams.filter;

import static io.tabula.streams.filter.Fixtures.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.ColumnRange;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.TimestampRange;
import com.google.bigtable.v2.ValueBitmask;
import com.google.bigtable.v2.ValueRange;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** Every rejection path, with the field path it must name. */
class FilterRejectionTest {
  static Stream<Arguments> invalid() {
    RowFilter unset = RowFilter.getDefaultInstance();
    return Stream.of(
        // unset kinds below the top level
        reject(chain(passAll(), unset), "filter.chain.filters[1]", "no filter kind"),
        reject(interleave(unset, passAll()), "filter.interleave.filters[0]", "no filter kind"),
        reject(condition(unset, passAll(), null), "filter.condition.predicate_filter", "no filter kind"),
        reject(condition(passAll(), unset, null), "filter.condition.true_filter", "no filter kind"),
        reject(condition(passAll(), null, unset), "filter.condition.false_filter", "no filter kind"),
        reject(RowFilter.newBuilder().setCondition(RowFilter.Condition.newBuilder().setTrueFilter(passAll())).build(),
            "filter.condition.predicate_filter", "must be set"),
        // composite sizes
        reject(chain(passAll()), "filter.chain.filters", "at least two"),
        reject(chain(), "filter.chain.filters", "at least two"),
        reject(interleave(passAll()), "filter.interleave.filters", "at least two"),
        // booleans that must be true
        reject(RowFilter.newBuilder().setPassAllFilter(false).build(), "filter.pass_all_filter", "must be true"),
        reject(RowFilter.newBuilder().setBlockAllFilter(false).build(), "filter.block_all_filter", "must be true"),
        reject(RowFilter.newBuilder().setSink(false).build(), "filter.sink", "must be true"),
        reject(RowFilter.newBuilder().setStripValueTransformer(false).build(),
            "filter.strip_value_transformer", "must be true"),
        // sinks in conditions
        reject(condition(sink(), passAll(), null), "filter.condition.predicate_filter.sink", "condition"),
        reject(condition(passAll(), chain(passAll(), sink()), null),
            "filter.condition.true_filter.chain.filters[1].sink", "condition"),
        reject(chain(passAll(), condition(passAll(), null, interleave(sink(), passAll()))),
            "filter.chain.filters[1].condition.false_filter.interleave.filters[0].sink", "condition"),
        // labels
        reject(label(""), "filter.apply_label_transformer", "1 to 15"),
        reject(label("abcdefghijklmnop"), "filter.apply_label_transformer", "1 to 15"),
        reject(label("Upper"), "filter.apply_label_transformer", "[a-z0-9\\-]+"),
        reject(label("a_b"), "filter.apply_label_transformer", "[a-z0-9\\-]+"),
        reject(chain(label("a"), label("b")), "filter.chain.filters[1]", "one label"),
        reject(chain(label("a"), passAll(), interleave(label("b"), passAll())), "filter.chain.filters[2]", "one label"),
        reject(chain(condition(passAll(), label("a"), null), label("b")), "filter.chain.filters[1]", "one label"),
        // regexes
        reject(rowKey("("), "filter.row_key_regex_filter", "RE2"),
        reject(family("f["), "filter.family_name_regex_filter", "RE2"),
        reject(family("a:b"), "filter.family_name_regex_filter", "':'"),
        reject(chain(passAll(), qualifier("*")), "filter.chain.filters[1].column_qualifier_regex_filter", "RE2"),
        reject(value("a{2,1}"), "filter.value_regex_filter", "RE2"),
        reject(value("[\\C]"), "filter.value_regex_filter", "RE2"),
        // sampling
        reject(sample(0.0), "filter.row_sample_filter", "between 0 and 1"),
        reject(sample(1.0), "filter.row_sample_filter", "between 0 and 1"),
        reject(sample(-0.5), "filter.row_sample_filter", "between 0 and 1"),
        reject(sample(Double.NaN), "filter.row_sample_filter", "between 0 and 1"),
        // counters
        reject(rowOffset(-1), "filter.cells_per_row_offset_filter", "negative"),
        reject(rowLimit(-1), "filter.cells_per_row_limit_filter", "negative"),
        reject(columnLimit(-2), "filter.cells_per_column_limit_filter", "negative"),
        // ranges
        reject(timestamps(-1, 0), "filter.timestamp_range_filter.start_timestamp_micros", "negative"),
        reject(timestamps(0, -5), "filter.timestamp_range_filter.end_timestamp_micros", "negative"),
        reject(timestamps(20, 10), "filter.timestamp_range_filter", "after it ends"),
        reject(RowFilter.newBuilder().setColumnRangeFilter(ColumnRange.newBuilder().setStartQualifierClosed(bs("a")))
            .build(), "filter.column_range_filter.family_name", "column family"),
        reject(RowFilter.newBuilder().setColumnRangeFilter(ColumnRange.newBuilder().setFamilyName("f")
            .setStartQualifierClosed(bs("b")).setEndQualifierOpen(bs("a"))).build(),
            "filter.column_range_filter", "after its end"),
        reject(RowFilter.newBuilder().setValueRangeFilter(ValueRange.newBuilder()
            .setStartValueOpen(bs("z")).setEndValueClosed(bs("y"))).build(),
            "filter.value_range_filter", "after its end"),
        reject(RowFilter.newBuilder().setValueBitmaskFilter(ValueBitmask.getDefaultInstance()).build(),
            "filter.value_bitmask_filter.mask", "required"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("invalid")
  void rejectsNamingTheField(RowFilter f, String field, String problem) {
    InvalidFilterException e = assertThrows(InvalidFilterException.class, () -> RowFilters.compile(f));
    assertEquals(field, e.field());
    assertTrue(e.problem().contains(problem), e.getMessage());
    assertTrue(e.getMessage().startsWith(field + ": "), e.getMessage());
  }

  @Test
  void rootFieldNameIsConfigurable() {
    InvalidFilterException e = assertThrows(InvalidFilterException.class,
        () -> RowFilters.compile(chain(passAll(), rowLimit(-1)), "predicate_filter", () -> 0.5));
    assertEquals("predicate_filter.chain.filters[1].cells_per_row_limit_filter", e.field());
  }

  @Test
  void rootFieldNameIsConfigurableWithTheDefaultRandomSource() {
    InvalidFilterException e = assertThrows(InvalidFilterException.class,
        () -> RowFilters.compile(chain(passAll(), rowLimit(-1)), "predicate_filter"));
    assertEquals("predicate_filter.chain.filters[1].cells_per_row_limit_filter", e.field());
  }

  @Test
  void nestingDeeperThanTwentyIsRejected() {
    RowFilter f = passAll();
    for (int i = 0; i < 20; i++) {
      f = chain(f, passAll());
    }
    RowFilters.compile(f); // 20 levels of chain around the innermost filter: accepted
    RowFilter tooDeep = chain(f, passAll());
    InvalidFilterException e = assertThrows(InvalidFilterException.class, () -> RowFilters.compile(tooDeep));
    assertEquals("filter" + ".chain.filters[0]".repeat(21), e.field());
  }

  @Test
  void oversizedFilterIsRejected() {
    RowFilter big = value("a".repeat(FilterCompiler.MAX_SERIALIZED_BYTES));
    InvalidFilterException e = assertThrows(InvalidFilterException.class, () -> RowFilters.compile(big));
    assertEquals("filter", e.field());
  }

  @Test
  void unknownFilterKindIsRejectedNotPassed() {
    // a filter kind from a newer proto arrives as an unknown field and leaves the oneof unset
    RowFilter future = RowFilter.newBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
        .addField(99, UnknownFieldSet.Field.newBuilder().addVarint(1).build()).build()).build();
    InvalidFilterException top = assertThrows(InvalidFilterException.class, () -> RowFilters.compile(future));
    assertEquals("filter", top.field());
    assertTrue(top.problem().contains("99"), top.getMessage());
    InvalidFilterException nested = assertThrows(InvalidFilterException.class,
        () -> RowFilters.compile(interleave(passAll(), future)));
    assertEquals("filter.interleave.filters[1]", nested.field());
  }

  @Test
  void unknownFieldInARangeIsRejected() {
    TimestampRange odd = TimestampRange.newBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
        .addField(7, UnknownFieldSet.Field.newBuilder().addLengthDelimited(ByteString.copyFromUtf8("x")).build())
        .build()).build();
    InvalidFilterException e = assertThrows(InvalidFilterException.class,
        () -> RowFilters.compile(RowFilter.newBuilder().setTimestampRangeFilter(odd).build()));
    assertEquals("filter.timestamp_range_filter", e.field());
  }

  @Test
  void acceptedEdgeCases() {
    // one label per chain, labels in separate interleave branches, labels in a predicate
    RowFilters.compile(chain(label("a"), passAll()));
    RowFilters.compile(interleave(label("a"), label("b")));
    RowFilters.compile(chain(condition(label("p"), passAll(), null), label("b")));
    RowFilters.compile(label("abcdefghijklmno"));
    RowFilters.compile(label("0-9"));
    // empty ranges that are not reversed, zero limits, the largest allowed nesting of a sink
    RowFilters.compile(timestamps(5, 5));
    RowFilters.compile(rowLimit(0));
    RowFilters.compile(columnLimit(0));
    RowFilters.compile(chain(passAll(), sink()));
  }

  private static Arguments reject(RowFilter f, String field, String problem) {
    return Arguments.of(f, field, problem);
  }

  private static RowFilter sample(double p) {
    return RowFilter.newBuilder().setRowSampleFilter(p).build();
  }

  private static RowFilter timestamps(long start, long end) {
    return LeafFiltersTest.timestamps(start, end);
  }
}
