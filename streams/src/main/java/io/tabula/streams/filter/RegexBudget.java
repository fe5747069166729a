package io.tabula.streams.filter;

/**
 * What the regular expressions of one filter may cost together, counted in instructions of
 * the programs re2j builds for them ({@link com.google.re2j.ProgramSize}): the budget is per
 * filter, not per pattern, because a 20 KiB filter can carry a thousand small patterns, each
 * harmless alone. Refusing at the limit is what keeps one request from filling the node's
 * heap (a program's instructions are built, and kept while the filter is cached) and bounds
 * what matching may cost per byte (re2j matches in time proportional to the program's size
 * times the subject's length; {@link ByteRegex} also bounds one match's time).
 *
 * <p>Not thread-safe: one per filter compilation.
 */
final class RegexBudget {
  /**
   * Instructions all regexes of one filter may compile to together. A pattern without counted
   * repetition costs at most about two instructions per byte, so any 20 KiB filter without
   * them fits; repetition is what expands. Measured on re2j 1.8 here ({@code RegexBudgetTest}
   * prints it): a program of this size compiles in 3 to 15 ms, allocating about 7 MiB and
   * keeping about 2 MiB. Matching costs up to about 12 ns per instruction per subject byte
   * when every instruction stays alive ({@code (?:a*){1000}}, 2002 instructions, takes 25 s
   * over 1 MiB of {@code a}).
   */
  static final long FILTER_INSTRUCTIONS = 50_000;
  /** How deep a pattern's groups and repetitions may nest: re2j simplifies and compiles recursively (Go's limit). */
  static final int MAX_DEPTH = 1000;

  /** How many counted repetitions nested in one another may multiply to: RE2 refuses more ({@code kMaxRepeat}). */
  static final long MAX_NESTED_REPETITION = 1000;

  private final long total;
  private long left;

  RegexBudget(long instructions) {
    this.total = instructions;
    this.left = instructions;
  }

  static RegexBudget forOneFilter() {
    return new RegexBudget(FILTER_INSTRUCTIONS);
  }

  /** What has been spent. */
  long spent() {
    return total - left;
  }

  /** What is left: the most a pattern may still cost. */
  long left() {
    return left;
  }

  /**
   * Spends {@code instructions} of the budget on the pattern in {@code field}.
   *
   * @throws InvalidFilterException naming the field when they are more than is left
   */
  void spend(long instructions, String field) {
    if (instructions > left) {
      // ProgramSize stops counting one past what was left.
      String size = instructions == left + 1 ? "more than " + left : Long.toString(instructions);
      throw new InvalidFilterException(field, "compiles to " + size + " instructions (repetitions counted out),"
          + " over what is left of the " + total + " all regular expressions of one filter may take"
          + " together");
    }
    left -= instructions;
  }
}
