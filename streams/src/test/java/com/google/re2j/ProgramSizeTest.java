package com.google.re2j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The estimate is never below the program re2j actually builds (compared on re2j's own
 * compiler, which is why this test lives in its package), and not far above it.
 */
class ProgramSizeTest {
  @ParameterizedTest
  @ValueSource(strings = {"", "a", "abc", "[0-9a-f]{32}", "(foo|bar|baz){1,100}", ".{0,1000}", "user#[0-9]{1,20}",
      "a{0,1000}", "(a{0,100}){0,10}", "(?:.{0,100}){0,10}", "(a|b|c|d|e|f|g|h|i|j){100}", "(a*){100}",
      "((a*)*){100}", "(?:a*){100}", "a+?b*?c??", "x{3,}", "(?:ab){2,}", "^a$|\\bb\\B", "(?i)hello", "(?s).*",
      "[^a]", "\\pL{3}", "a{0}", "(a){0,0}b", "(|a)", "(?:)", "a|b|c|abc|abd", "(((a)))"})
  void estimateCoversWhatRe2jBuilds(String pattern) {
    long actual = RE2.compileImpl(pattern, RE2.PERL, false).prog.numInst();
    long estimate = ProgramSize.of(pattern, 1_000_000).instructions();
    assertTrue(estimate >= actual, pattern + ": estimated " + estimate + ", built " + actual);
    assertTrue(estimate <= 2 * actual + 10, pattern + ": estimated " + estimate + ", built " + actual);
  }

  @Test
  void countingStopsOnePastTheCap() {
    assertEquals(1001, ProgramSize.of("((a{1000}){1000}){1000}", 1000).instructions());
    assertEquals(1001, ProgramSize.of("a{1000}a{1000}", 1000).instructions());
    assertEquals(1002, ProgramSize.of("a{1000}", 1_000_000).instructions());
  }

  @Test
  void nestedRepetitionsMultiply() {
    assertEquals(1_000_000_000L, ProgramSize.of("((a{1000}){1000}){1000}", 10).nestedRepetition());
    assertEquals(1000, ProgramSize.of("a{1000}b{1000}", 10).nestedRepetition());
    assertEquals(20, ProgramSize.of("(a{2,}){10}", 10).nestedRepetition());
    assertEquals(1, ProgramSize.of("(a*)+", 10).nestedRepetition());
    assertEquals(ProgramSize.REPETITION_CAP,
        ProgramSize.of("(".repeat(10) + "a" + "{1000})".repeat(10), 10).nestedRepetition());
  }

  @Test
  void depthIsMeasuredWithoutRecursion() {
    String deep = "(".repeat(100_000) + "a" + ")".repeat(100_000);
    assertTrue(ProgramSize.of(deep, 10).depth() > 100_000);
  }

  @Test
  void invalidPatternsAreSyntaxErrors() {
    assertThrows(PatternSyntaxException.class, () -> ProgramSize.of("(", 10));
    assertThrows(PatternSyntaxException.class, () -> ProgramSize.of("a{1001}", 10));
  }
}
