package io.tabula.streams.filter;

import com.google.bigtable.v2.ColumnRange;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.TimestampRange;
import com.google.bigtable.v2.ValueBitmask;
import com.google.bigtable.v2.ValueRange;
import com.google.protobuf.Message;
import io.tabula.persistence.encoding.ByteArrays;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Validates a {@code RowFilter} completely and turns it into a {@link FilterNode} tree. Every
 * rule it enforces, and the field path each rejection names, is listed in {@link RowFilters}.
 * Stateless.
 */
final class FilterCompiler {
  /** Cloud Bigtable's limit on a filter's serialized size. */
  static final int MAX_SERIALIZED_BYTES = 20480;
  /** Cloud Bigtable's limit on how many composite filters may enclose a filter. */
  static final int MAX_NESTING = 20;
  /** Cloud Bigtable's limit on a label's length. */
  static final int MAX_LABEL_LENGTH = 15;

  private FilterCompiler() {}

  /** Compiles {@code f}, spending what its regular expressions cost from {@code budget}. */
  static FilterNode compileTop(RowFilter f, String field, RegexBudget budget) {
    int size = f.getSerializedSize();
    if (size > MAX_SERIALIZED_BYTES) {
      throw new InvalidFilterException(field,
          "is " + size + " bytes serialized; at most " + MAX_SERIALIZED_BYTES + " are allowed");
    }
    if (f.getFilterCase() == RowFilter.FilterCase.FILTER_NOT_SET) {
      rejectUnknownFields(f, field);
      return CompositeNodes.PassAll.INSTANCE;
    }
    return compile(f, field, 0, false, budget);
  }

  private static FilterNode compile(RowFilter f, String path, int nesting, boolean inCondition, RegexBudget budget) {
    rejectUnknownFields(f, path);
    return switch (f.getFilterCase()) {
      case CHAIN -> chain(f, path + ".chain", nesting, inCondition, budget);
      case INTERLEAVE -> interleave(f, path + ".interleave", nesting, inCondition, budget);
      case CONDITION -> condition(f, path + ".condition", nesting, budget);
      case SINK -> {
        requireTrue(f.getSink(), path + ".sink");
        if (inCondition) {
          throw new InvalidFilterException(path + ".sink",
              "cannot be used inside the predicate_filter, true_filter or false_filter of a condition");
        }
        yield CompositeNodes.Sink.INSTANCE;
      }
      case PASS_ALL_FILTER -> {
        requireTrue(f.getPassAllFilter(), path + ".pass_all_filter");
        yield CompositeNodes.PassAll.INSTANCE;
      }
      case BLOCK_ALL_FILTER -> {
        requireTrue(f.getBlockAllFilter(), path + ".block_all_filter");
        yield CompositeNodes.BlockAll.INSTANCE;
      }
      case ROW_KEY_REGEX_FILTER -> new CellNodes.RowKeyRegex(
          ByteRegex.compile(f.getRowKeyRegexFilter().toByteArray(), path + ".row_key_regex_filter", budget));
      case ROW_SAMPLE_FILTER -> rowSample(f.getRowSampleFilter(), path + ".row_sample_filter");
      case FAMILY_NAME_REGEX_FILTER -> familyRegex(f.getFamilyNameRegexFilter(), path + ".family_name_regex_filter",
          budget);
      case COLUMN_QUALIFIER_REGEX_FILTER -> new CellNodes.Matching(CellTests.qualifier(ByteRegex.compile(
          f.getColumnQualifierRegexFilter().toByteArray(), path + ".column_qualifier_regex_filter", budget)));
      case COLUMN_RANGE_FILTER -> columnRange(f.getColumnRangeFilter(), path + ".column_range_filter");
      case TIMESTAMP_RANGE_FILTER -> timestampRange(f.getTimestampRangeFilter(), path + ".timestamp_range_filter");
      case VALUE_REGEX_FILTER -> new CellNodes.Matching(CellTests.value(
          ByteRegex.compile(f.getValueRegexFilter().toByteArray(), path + ".value_regex_filter", budget)));
      case VALUE_RANGE_FILTER -> valueRange(f.getValueRangeFilter(), path + ".value_range_filter");
      case CELLS_PER_ROW_OFFSET_FILTER -> new CellNodes.RowOffset(
          nonNegative(f.getCellsPerRowOffsetFilter(), path + ".cells_per_row_offset_filter"));
      case CELLS_PER_ROW_LIMIT_FILTER -> new CellNodes.RowLimit(
          nonNegative(f.getCellsPerRowLimitFilter(), path + ".cells_per_row_limit_filter"));
      case CELLS_PER_COLUMN_LIMIT_FILTER -> new CellNodes.ColumnLimit(
          nonNegative(f.getCellsPerColumnLimitFilter(), path + ".cells_per_column_limit_filter"));
      case STRIP_VALUE_TRANSFORMER -> {
        requireTrue(f.getStripValueTransformer(), path + ".strip_value_transformer");
        yield CellNodes.StripValue.INSTANCE;
      }
      case APPLY_LABEL_TRANSFORMER -> new CellNodes.ApplyLabel(
          label(f.getApplyLabelTransformer(), path + ".apply_label_transformer"));
      case VALUE_BITMASK_FILTER -> valueBitmask(f.getValueBitmaskFilter(), path + ".value_bitmask_filter");
      case FILTER_NOT_SET -> throw new InvalidFilterException(path,
          "sets no filter kind; only the top-level filter may be left empty");
      default -> throw new InvalidFilterException(path,
          "is a filter kind this server does not support (" + f.getFilterCase() + ")");
    };
  }

  private static FilterNode chain(RowFilter f, String path, int nesting, boolean inCondition,
      RegexBudget budget) {
    rejectUnknownFields(f.getChain(), path);
    List<RowFilter> subs = f.getChain().getFiltersList();
    requireTwo(subs, path, "chain");
    List<FilterNode> nodes = new ArrayList<>(subs.size());
    int labelled = -1;
    for (int i = 0; i < subs.size(); i++) {
      String subPath = path + ".filters[" + i + "]";
      nodes.add(compileNested(subs.get(i), subPath, nesting, inCondition, budget));
      if (mayLabel(subs.get(i))) {
        if (labelled >= 0) {
          throw new InvalidFilterException(subPath, "is the second sub-filter of this chain that applies a label"
              + " (filters[" + labelled + "] is the first); a cell can carry at most one label");
        }
        labelled = i;
      }
    }
    return new CompositeNodes.Chain(List.copyOf(nodes));
  }

  private static FilterNode interleave(RowFilter f, String path, int nesting, boolean inCondition,
      RegexBudget budget) {
    rejectUnknownFields(f.getInterleave(), path);
    List<RowFilter> subs = f.getInterleave().getFiltersList();
    requireTwo(subs, path, "interleave");
    List<FilterNode> nodes = new ArrayList<>(subs.size());
    for (int i = 0; i < subs.size(); i++) {
      nodes.add(compileNested(subs.get(i), path + ".filters[" + i + "]", nesting, inCondition, budget));
    }
    return new CompositeNodes.Interleave(List.copyOf(nodes));
  }

  private static FilterNode condition(RowFilter f, String path, int nesting, RegexBudget budget) {
    RowFilter.Condition c = f.getCondition();
    rejectUnknownFields(c, path);
    if (!c.hasPredicateFilter()) {
      throw new InvalidFilterException(path + ".predicate_filter", "must be set");
    }
    FilterNode predicate = compileNested(c.getPredicateFilter(), path + ".predicate_filter", nesting, true,
        budget);
    FilterNode onTrue = c.hasTrueFilter()
        ? compileNested(c.getTrueFilter(), path + ".true_filter", nesting, true, budget)
        : CompositeNodes.BlockAll.INSTANCE;
    FilterNode onFalse = c.hasFalseFilter()
        ? compileNested(c.getFalseFilter(), path + ".false_filter", nesting, true, budget)
        : CompositeNodes.BlockAll.INSTANCE;
    return new CompositeNodes.Condition(predicate, onTrue, onFalse);
  }

  private static FilterNode compileNested(RowFilter sub, String path, int parentNesting, boolean inCondition,
      RegexBudget budget) {
    int nesting = parentNesting + 1;
    if (nesting > MAX_NESTING) {
      throw new InvalidFilterException(path,
          "is nested " + nesting + " filters deep; at most " + MAX_NESTING + " levels are allowed");
    }
    return compile(sub, path, nesting, inCondition, budget);
  }

  /**
   * True if cells leaving {@code f} may carry a label applied inside it. A condition's
   * predicate does not count: its cells never leave the condition.
   */
  private static boolean mayLabel(RowFilter f) {
    return switch (f.getFilterCase()) {
      case APPLY_LABEL_TRANSFORMER -> true;
      case CHAIN -> f.getChain().getFiltersList().stream().anyMatch(FilterCompiler::mayLabel);
      case INTERLEAVE -> f.getInterleave().getFiltersList().stream().anyMatch(FilterCompiler::mayLabel);
      case CONDITION -> mayLabel(f.getCondition().getTrueFilter()) || mayLabel(f.getCondition().getFalseFilter());
      default -> false;
    };
  }

  private static FilterNode rowSample(double p, String path) {
    if (!(p > 0.0 && p < 1.0)) {
      throw new InvalidFilterException(path, "is " + p + "; it must be a probability strictly between 0 and 1");
    }
    return new CellNodes.RowSample(p);
  }

  private static FilterNode familyRegex(String regex, String path, RegexBudget budget) {
    if (regex.indexOf(':') >= 0) {
      throw new InvalidFilterException(path, "must not contain ':', not even as a literal");
    }
    return new CellNodes.Matching(CellTests.family(
        ByteRegex.compile(regex.getBytes(StandardCharsets.UTF_8), path, budget)));
  }

  private static FilterNode columnRange(ColumnRange r, String path) {
    rejectUnknownFields(r, path);
    if (r.getFamilyName().isEmpty()) {
      throw new InvalidFilterException(path + ".family_name", "must name a column family");
    }
    CellTests.Bound start = switch (r.getStartQualifierCase()) {
      case START_QUALIFIER_CLOSED -> new CellTests.Bound(r.getStartQualifierClosed().toByteArray(), true);
      case START_QUALIFIER_OPEN -> new CellTests.Bound(r.getStartQualifierOpen().toByteArray(), false);
      case STARTQUALIFIER_NOT_SET -> CellTests.Bound.EMPTY_CLOSED;
      default -> throw new InvalidFilterException(path, "has an unsupported start_qualifier kind");
    };
    CellTests.Bound end = switch (r.getEndQualifierCase()) {
      case END_QUALIFIER_CLOSED -> new CellTests.Bound(r.getEndQualifierClosed().toByteArray(), true);
      case END_QUALIFIER_OPEN -> new CellTests.Bound(r.getEndQualifierOpen().toByteArray(), false);
      case ENDQUALIFIER_NOT_SET -> CellTests.Bound.UNBOUNDED;
      default -> throw new InvalidFilterException(path, "has an unsupported end_qualifier kind");
    };
    requireOrdered(start, end, path, "qualifier");
    return new CellNodes.Matching(CellTests.columnRange(r.getFamilyName(), start, end));
  }

  private static FilterNode valueRange(ValueRange r, String path) {
    rejectUnknownFields(r, path);
    CellTests.Bound start = switch (r.getStartValueCase()) {
      case START_VALUE_CLOSED -> new CellTests.Bound(r.getStartValueClosed().toByteArray(), true);
      case START_VALUE_OPEN -> new CellTests.Bound(r.getStartValueOpen().toByteArray(), false);
      case STARTVALUE_NOT_SET -> CellTests.Bound.EMPTY_CLOSED;
      default -> throw new InvalidFilterException(path, "has an unsupported start_value kind");
    };
    CellTests.Bound end = switch (r.getEndValueCase()) {
      case END_VALUE_CLOSED -> new CellTests.Bound(r.getEndValueClosed().toByteArray(), true);
      case END_VALUE_OPEN -> new CellTests.Bound(r.getEndValueOpen().toByteArray(), false);
      case ENDVALUE_NOT_SET -> CellTests.Bound.UNBOUNDED;
      default -> throw new InvalidFilterException(path, "has an unsupported end_value kind");
    };
    requireOrdered(start, end, path, "value");
    return new CellNodes.Matching(CellTests.valueRange(start, end));
  }

  private static FilterNode timestampRange(TimestampRange r, String path) {
    rejectUnknownFields(r, path);
    long start = r.getStartTimestampMicros();
    long end = r.getEndTimestampMicros();
    if (start < 0) {
      throw new InvalidFilterException(path + ".start_timestamp_micros", "is " + start + "; it must not be negative");
    }
    if (end < 0) {
      throw new InvalidFilterException(path + ".end_timestamp_micros", "is " + end + "; it must not be negative");
    }
    if (end != 0 && start > end) {
      throw new InvalidFilterException(path, "starts at " + start + " after it ends at " + end);
    }
    return new CellNodes.Matching(CellTests.timestampRange(start, end));
  }

  private static FilterNode valueBitmask(ValueBitmask m, String path) {
    rejectUnknownFields(m, path);
    if (m.getMask().isEmpty()) {
      throw new InvalidFilterException(path + ".mask", "is required and must not be empty");
    }
    return new CellNodes.Matching(CellTests.valueBitmask(m.getMask().toByteArray()));
  }

  private static String label(String label, String path) {
    if (label.isEmpty() || label.length() > MAX_LABEL_LENGTH) {
      throw new InvalidFilterException(path,
          "is " + label.length() + " characters long; a label has 1 to " + MAX_LABEL_LENGTH);
    }
    for (int i = 0; i < label.length(); i++) {
      char c = label.charAt(i);
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
        throw new InvalidFilterException(path, "is \"" + label + "\"; a label must match [a-z0-9\\-]+");
      }
    }
    return label;
  }

  private static void requireOrdered(CellTests.Bound start, CellTests.Bound end, String path, String what) {
    if (start.bytes() != null && end.bytes() != null && ByteArrays.compare(start.bytes(), end.bytes()) > 0) {
      throw new InvalidFilterException(path, "starts at " + what + " " + ByteArrays.show(start.bytes())
          + ", after its end " + ByteArrays.show(end.bytes()));
    }
  }

  private static void requireTwo(List<RowFilter> subs, String path, String kind) {
    if (subs.size() < 2) {
      throw new InvalidFilterException(path + ".filters",
          "has " + subs.size() + " filter(s); a " + kind + " needs at least two");
    }
  }

  private static void requireTrue(boolean value, String path) {
    if (!value) {
      throw new InvalidFilterException(path, "is false; it must be true when set");
    }
  }

  private static int nonNegative(int n, String path) {
    if (n < 0) {
      throw new InvalidFilterException(path, "is " + n + "; it must not be negative");
    }
    return n;
  }

  /** Refuses fields this server's proto version does not know, rather than ignoring them. */
  private static void rejectUnknownFields(Message m, String path) {
    if (!m.getUnknownFields().asMap().isEmpty()) {
      throw new InvalidFilterException(path, "carries fields unknown to this server (numbers "
          + m.getUnknownFields().asMap().keySet() + "); refusing rather than ignoring them");
    }
  }
}
