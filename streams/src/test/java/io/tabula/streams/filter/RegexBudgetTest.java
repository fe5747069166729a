package io.tabula.streams.filter;

import static io.tabula.streams.filter.Fixtures.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.RowFilter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Patterns whose programs re2j would expand past any heap are refused before they are built,
 * naming the field; the patterns people write are accepted. Without the budget, the first
 * hostile shapes below fill the heap (re2j expands {@code ((a{1000}){1000}){1000}} into a
 * billion instructions).
 */
class RegexBudgetTest {
  static Stream<Arguments> hostile() {
    return Stream.of(
        // nested counted repetitions: RE2's product rule
        reject(rowKey("((a{1000}){1000}){1000}"), "filter.row_key_regex_filter", "multiply"),
        reject(value("(a{100}){100}"), "filter.value_regex_filter", "multiply to 10000"),
        reject(value("(?:(?:x{2,}){40}){40}"), "filter.value_regex_filter", "multiply"),
        reject(value("(((((((((((a{2}){2}){2}){2}){2}){2}){2}){2}){2}){2}){2})"), "filter.value_regex_filter",
            "multiply to 2048"),
        // programs too large without nesting: a large character class repeated, repeats in a row
        reject(qualifier("[\\x00-\\xff]{1000}".repeat(60)), "filter.column_qualifier_regex_filter", "instructions"),
        reject(family("(abcdefghij){1000}".repeat(5)), "filter.family_name_regex_filter", "instructions"),
        // a huge alternation of repeated alternatives
        reject(rowKey(alternation(200, "x%d[0-9a-f]{1000}")), "filter.row_key_regex_filter", "instructions"),
        // nesting deeper than re2j can simplify and compile without a deep stack
        reject(rowKey("(".repeat(1500) + "a" + ")".repeat(1500)), "filter.row_key_regex_filter", "deep"),
        // the budget is for the whole filter: each pattern fits, all of them do not
        reject(chain(value("a{1000}".repeat(30)), rowKey("b{1000}".repeat(30))),
            "filter.chain.filters[1].row_key_regex_filter", "left of the 50000"),
        reject(condition(value(".{0,1000}".repeat(13)), passAll(), chain(passAll(), qualifier(".{0,1000}".repeat(13)))),
            "filter.condition.false_filter.chain.filters[1].column_qualifier_regex_filter", "instructions"));
  }

  private static Arguments reject(RowFilter f, String field, String problem) {
    return Arguments.of(f, field, problem);
  }

  /** {@code n} alternatives made from {@code format} and their index (equal ones would be merged by the parser). */
  private static String alternation(int n, String format) {
    StringJoiner j = new StringJoiner("|");
    for (int i = 0; i < n; i++) {
      j.add(String.format(format, i));
    }
    return j.toString();
  }

  @ParameterizedTest(name = "{1}: {2}")
  @MethodSource("hostile")
  void refusedNamingTheField(RowFilter f, String field, String problem) {
    long before = allocated();
    InvalidFilterException e = assertThrows(InvalidFilterException.class, () -> RowFilters.compile(f));
    long cost = allocated() - before;
    assertEquals(field, e.field(), e.getMessage());
    assertTrue(e.problem().contains(problem), e.getMessage());
    // Refusing is measuring, not building: a few MiB at most for a 20 KiB filter.
    assertTrue(cost < 32L << 20, "refusing allocated " + cost + " bytes");
  }

  static Stream<String> realistic() {
    StringJoiner ids = new StringJoiner("|");
    for (int i = 0; i < 1000; i++) {
      ids.add(String.format("user%06d", i * 7919));
    }
    return Stream.of("[0-9a-f]{32}", "(foo|bar|baz){1,100}", ".{0,1000}", "user#[0-9]{1,20}", "(?i)error|warn(ing)?",
        "\\C*", "(a{10}){100}", "[[:alpha:]]+@[a-z]+\\.(com|org)", ids.toString());
  }

  @ParameterizedTest
  @MethodSource("realistic")
  void realisticPatternsAreAccepted(String pattern) {
    RowFilters.compile(value(pattern));
    RowFilters.compile(rowKey(pattern));
  }

  @Test
  void aFilterRightAtTheBudgetCompilesQuicklyAndSmall() {
    // 24 repeats of .{0,1000} and one of .{0,990}: 2000 instructions each, plus the program's
    // two, 49,982 in all.
    RowFilter f = value(".{0,1000}".repeat(24) + ".{0,990}");
    long before = allocated();
    long started = System.nanoTime();
    CompiledFilter c = RowFilters.compile(f);
    long millis = (System.nanoTime() - started) / 1_000_000;
    long bytes = allocated() - before;
    assertEquals(49_982, c.regexInstructions());
    System.out.printf("compiling a filter of %d regex instructions: %d ms, %.1f MiB allocated%n",
        c.regexInstructions(), millis, bytes / 1048576.0);
    assertTrue(bytes < 16L << 20, "compiling allocated " + bytes + " bytes");
    // One more instruction's worth is refused.
    assertThrows(InvalidFilterException.class, () -> RowFilters.compile(value(".{0,1000}".repeat(25) + "a")));
  }

  @Test
  void aCompiledFilterSaysWhatItsRegexesCost() {
    assertEquals(0, RowFilters.compile(passAll()).regexInstructions());
    assertEquals(0, RowFilters.compile(rowLimit(3)).regexInstructions());
    // a{1000}: 1000 instructions plus the program's two; [0-9]: one plus two.
    assertEquals(1005, RowFilters.compile(chain(value("a{1000}"), rowKey("[0-9]"))).regexInstructions());
  }

  @Test
  void manyFiltersAtTheBudgetDoNotAccumulate() {
    // What compiling leaves behind is the compiled filter alone: keeping 20 of the largest
    // allowed stays within a few tens of MiB (a cache weighs them by regexInstructions()).
    List<CompiledFilter> kept = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      kept.add(RowFilters.compile(value(".{0,1000}".repeat(24) + "x{" + i + "}")));
    }
    assertEquals(20, kept.size());
  }

  private static long allocated() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
  }
}
