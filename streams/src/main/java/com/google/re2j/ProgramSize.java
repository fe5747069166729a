package com.google.re2j;

import java.util.ArrayDeque;

/**
 * What the program re2j would build for a pattern costs, measured on re2j's own parse tree
 * before anything is expanded: re2j has no limit of its own, and its simplifier and compiler
 * expand every counted repetition ({@code x{n,m}} becomes m copies of x, nested repetitions
 * multiply), so {@code ((a{1000}){1000}){1000}} becomes a billion instructions and fills any
 * heap. RE2 and Go's regexp refuse such programs; this lets Tabula refuse them too, before
 * they are built.
 *
 * <p>It lives in re2j's package because the parse tree ({@link Regexp}) and the parser are
 * package-private; it only reads them. Parsing is linear in the pattern and iterative, as is
 * the walk here (an explicit stack: a pattern of thousands of nested groups costs heap, not
 * stack). Written against re2j 1.8, the version the build pins; the estimate follows that
 * version's {@code Simplify} and {@code Compiler}: one instruction per literal rune, per
 * character class (whose ranges are shared between copies), per empty-width assertion and
 * per alternation, plus and question mark, two per star and per capturing group, and for
 * {@code x{n,m}} m copies of x plus m - n question marks ({@code x{n,}}: n copies and a plus),
 * and two more for the whole program. It errs on the high side, never below what re2j builds
 * ({@code ProgramSizeTest} compares the two).
 *
 * <p>Stateless and thread-safe.
 */
public final class ProgramSize {
  /**
   * What a pattern costs: its program's instructions (saturated at the cap asked for), its
   * tree's depth, and the largest product of counted repetitions nested in one another (each
   * {@code x{n,m}} counting m, or n when unbounded; saturated past {@link #REPETITION_CAP}).
   */
  public record Cost(long instructions, int depth, long nestedRepetition) {}

  /** Where the nested repetition product stops counting. */
  public static final long REPETITION_CAP = 1L << 40;

  private ProgramSize() {}

  /**
   * The cost of {@code pattern} as {@code Pattern.compile} (RE2 syntax, Perl flags) would
   * build it, counting no further than {@code cap} (a larger program reports {@code cap + 1}).
   *
   * @throws PatternSyntaxException if it is not a valid pattern
   */
  public static Cost of(String pattern, long cap) {
    Regexp root = Parser.parse(pattern, RE2.PERL);
    return measure(root, cap);
  }

  /** One node of the walk: the node, how many of its subexpressions are done, and their total so far. */
  private static final class Frame {
    final Regexp re;
    /** The product of the counted repetitions from the root down to this node, itself included. */
    final long repetition;
    int next;
    long sum;

    Frame(Regexp re, long outer) {
      this.re = re;
      long own = re.op != Regexp.Op.REPEAT ? 1 : re.max == -1 ? re.min : re.max;
      this.repetition = own <= 0 ? outer : Math.min(REPETITION_CAP, outer * own);
    }
  }

  private static Cost measure(Regexp root, long cap) {
    ArrayDeque<Frame> stack = new ArrayDeque<>();
    stack.push(new Frame(root, 1));
    int depth = 1;
    long repetition = stack.peek().repetition;
    long result = 0;
    while (!stack.isEmpty()) {
      Frame f = stack.peek();
      if (needsSubs(f.re.op) && f.re.subs != null && f.next < f.re.subs.length) {
        Frame sub = new Frame(f.re.subs[f.next++], f.repetition);
        stack.push(sub);
        depth = Math.max(depth, stack.size());
        repetition = Math.max(repetition, sub.repetition);
        continue;
      }
      stack.pop();
      long size = own(f, cap);
      if (stack.isEmpty()) {
        result = size;
      } else {
        Frame parent = stack.peek();
        parent.sum = add(parent.sum, size, cap);
      }
    }
    // Every program also has a FAIL instruction first and a MATCH last.
    return new Cost(Math.min(add(result, 2, cap), cap + 1), depth, repetition);
  }

  private static boolean needsSubs(Regexp.Op op) {
    return switch (op) {
      case CAPTURE, STAR, PLUS, QUEST, REPEAT, CONCAT, ALTERNATE -> true;
      default -> false;
    };
  }

  /** The instructions of a node whose subexpressions add up to {@code f.sum}. */
  private static long own(Frame f, long cap) {
    Regexp re = f.re;
    return switch (re.op) {
      case LITERAL -> Math.max(1, re.runes.length);
      case CAPTURE -> add(f.sum, 2, cap);
      case STAR -> add(f.sum, 2, cap); // a nullable x* compiles as (x+)?
      case PLUS, QUEST -> add(f.sum, 1, cap);
      case CONCAT -> Math.max(1, f.sum);
      case ALTERNATE -> add(f.sum, Math.max(0, re.subs.length - 1), cap);
      case REPEAT -> repeat(f.sum, re.min, re.max, cap);
      default -> 1; // a character class, any character, an empty-width assertion, no match, empty match
    };
  }

  private static long repeat(long sub, int min, int max, long cap) {
    if (min == 0 && max == 0) {
      return 1;
    }
    if (max == -1) {
      return add(times(sub, Math.max(1, min), cap), 1, cap);
    }
    return add(times(sub, max, cap), max - min, cap);
  }

  private static long add(long a, long b, long cap) {
    long s = a + b;
    return s > cap || s < 0 ? cap + 1 : s;
  }

  private static long times(long a, long n, long cap) {
    if (a == 0 || n == 0) {
      return 0;
    }
    return a > (cap + 1) / n ? cap + 1 : Math.min(a * n, cap + 1);
  }
}
