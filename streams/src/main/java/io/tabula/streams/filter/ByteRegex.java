package io.tabula.streams.filter;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import com.google.re2j.ProgramSize;
import java.nio.charset.StandardCharsets;

/**
 * An RE2 pattern matched against raw bytes with full-match semantics, the way Cloud Bigtable's
 * regex filters work (RE2 in Latin-1 mode: one byte is one character).
 *
 * <p>re2j matches Java strings, so both the pattern and each subject are decoded as ISO-8859-1,
 * which maps each byte {@code 0xNN} to the character {@code U+00NN}, one to one. Consequences, all matching
 * RE2's Latin-1 mode:
 * <ul>
 *   <li>Binary subjects work: every byte is a character, nothing is lost or rejected.
 *   <li>A non-ASCII UTF-8 character written literally in a pattern (say {@code é}, bytes
 *       {@code C3 A9}) becomes two pattern characters and matches exactly those two bytes; in a
 *       character class it means either byte, and {@code .} matches one byte, not one UTF-8
 *       character. The Go emulator escapes such bytes and matches raw bytes, which behaves the
 *       same.
 *   <li>{@code .} does not match {@code \n}; {@code \C} (any byte) is supported by rewriting it
 *       to {@code (?s:.)} outside character classes and {@code \Q...\E} quotes, since re2j
 *       itself rejects {@code \C}.
 * </ul>
 *
 * <p>Thread safety: immutable; re2j patterns are safe to share.
 */
final class ByteRegex {
  /**
   * How long matching one byte subject may take. re2j matches in time proportional to the
   * program's size times the subject's length: the largest program a filter may have (50,000
   * instructions) can cost about half a millisecond per byte, hours for a 100 MiB value, and
   * a match cannot be interrupted from outside. Ordinary patterns match a 100 MiB value in a
   * few seconds. Half the node's default ask timeout (10 s), so that a check-and-mutate whose
   * predicate meets one such value is answered RESOURCE_EXHAUSTED by the tablet rather than
   * UNAVAILABLE by the timed-out ask.
   */
  static final long MATCH_NANOS = 5_000_000_000L;
  /** How many characters re2j reads between looks at the clock. */
  private static final int READS_PER_CLOCK = 1024;

  private final Pattern pattern;
  private final String field;

  private ByteRegex(Pattern pattern, String field) {
    this.pattern = pattern;
    this.field = field;
  }

  /**
   * Compiles {@code patternBytes}, first measuring what its program will cost
   * ({@link ProgramSize}) and spending that from {@code budget}: a pattern over what is left,
   * nesting deeper than {@value RegexBudget#MAX_DEPTH}, or with nested counted repetitions
   * multiplying to more than {@value RegexBudget#MAX_NESTED_REPETITION}, is refused before re2j
   * builds anything.
   *
   * @throws InvalidFilterException naming {@code field} if the pattern is not valid RE2 or
   *     costs too much
   */
  static ByteRegex compile(byte[] patternBytes, String field, RegexBudget budget) {
    String pattern = rewriteAnyByte(new String(patternBytes, StandardCharsets.ISO_8859_1));
    try {
      ProgramSize.Cost cost = ProgramSize.of(pattern, budget.left());
      if (cost.depth() > RegexBudget.MAX_DEPTH) {
        throw new InvalidFilterException(field, "nests groups and repetitions " + cost.depth()
            + " deep; at most " + RegexBudget.MAX_DEPTH + " levels are allowed");
      }
      if (cost.nestedRepetition() > RegexBudget.MAX_NESTED_REPETITION) {
        throw new InvalidFilterException(field, "nests counted repetitions whose counts multiply to "
            + (cost.nestedRepetition() >= ProgramSize.REPETITION_CAP ? "more than " + ProgramSize.REPETITION_CAP
                : Long.toString(cost.nestedRepetition()))
            + "; at most " + RegexBudget.MAX_NESTED_REPETITION + " are allowed, as in RE2");
      }
      budget.spend(cost.instructions(), field);
      return new ByteRegex(Pattern.compile(pattern), field);
    } catch (PatternSyntaxException e) {
      throw new InvalidFilterException(field, "is not a valid RE2 regular expression: " + e.getMessage());
    }
  }

  /** Compiles a pattern alone, under a budget of its own (for tests). */
  static ByteRegex compile(byte[] patternBytes, String field) {
    return compile(patternBytes, field, RegexBudget.forOneFilter());
  }

  /**
   * True if the whole of {@code subject} matches.
   *
   * @throws FilterTooSlowException if matching takes longer than {@link #MATCH_NANOS}
   */
  boolean matches(byte[] subject) {
    return matches(subject, MATCH_NANOS);
  }

  /** As {@link #matches(byte[])}, giving up after {@code nanos} (for tests, with a short limit). */
  boolean matches(byte[] subject, long nanos) {
    return pattern.matcher(new Subject(subject, nanos)).matches();
  }

  private FilterTooSlowException tooSlow(int length, long nanos) {
    return new FilterTooSlowException(field, "matching one subject of " + length + " bytes took more than "
        + nanos / 1_000_000 + " ms; the pattern is too costly for subjects this long");
  }

  /**
   * A byte subject as Latin-1 characters (byte 0xNN is U+00NN), read by re2j one character per
   * step of its machine; every {@value #READS_PER_CLOCK} reads it looks at the clock and, past
   * the deadline, ends the match by throwing. Owned by the matching thread.
   */
  private final class Subject implements CharSequence {
    private final byte[] bytes;
    private final long nanos;
    /** Set at the first look at the clock: most subjects (keys, qualifiers) never get that far. */
    private long deadline;
    private int reads;

    Subject(byte[] bytes, long nanos) {
      this.bytes = bytes;
      this.nanos = nanos;
    }

    @Override
    public char charAt(int index) {
      if (++reads % READS_PER_CLOCK == 0) {
        lookAtTheClock();
      }
      return (char) (bytes[index] & 0xff);
    }

    /** The time counts from the first look, {@value #READS_PER_CLOCK} reads in: a small part of any limit. */
    private void lookAtTheClock() {
      long now = System.nanoTime();
      if (reads == READS_PER_CLOCK) {
        deadline = now + nanos;
      } else if (now - deadline > 0) {
        throw tooSlow(bytes.length, nanos);
      }
    }

    @Override
    public int length() {
      return bytes.length;
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return new String(bytes, start, end - start, StandardCharsets.ISO_8859_1);
    }

    @Override
    public String toString() {
      return new String(bytes, StandardCharsets.ISO_8859_1);
    }
  }

  /**
   * True if the whole of {@code subject}'s UTF-8 encoding matches. An ASCII string (every family
   * name the schema accepts) is its own UTF-8 bytes read as Latin-1, so it is matched as it is;
   * any other string is encoded first.
   */
  boolean matches(String subject) {
    return isAscii(subject)
        ? pattern.matcher(subject).matches()
        : matches(subject.getBytes(StandardCharsets.UTF_8));
  }

  private static boolean isAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  /**
   * Replaces each {@code \C} that RE2 would read as "any byte" with {@code (?s:.)}. Escapes are
   * copied as pairs, so {@code \\C} stays a backslash followed by {@code C}; inside a character
   * class {@code \C} is left alone for re2j to reject, as RE2 does.
   */
  static String rewriteAnyByte(String p) {
    if (p.indexOf("\\C") < 0) {
      return p;
    }
    StringBuilder out = new StringBuilder(p.length() + 8);
    boolean inClass = false;
    int i = 0;
    while (i < p.length()) {
      char c = p.charAt(i);
      if (c == '\\' && i + 1 < p.length()) {
        char next = p.charAt(i + 1);
        if (next == 'Q' && !inClass) {
          int end = p.indexOf("\\E", i + 2);
          int stop = end < 0 ? p.length() : end + 2;
          out.append(p, i, stop);
          i = stop;
          continue;
        }
        if (next == 'C' && !inClass) {
          out.append("(?s:.)");
        } else {
          out.append(c).append(next);
        }
        i += 2;
        continue;
      }
      if (!inClass && c == '[') {
        inClass = true;
        out.append(c);
        i++;
        if (i < p.length() && p.charAt(i) == '^') {
          out.append('^');
          i++;
        }
        if (i < p.length() && p.charAt(i) == ']') {
          out.append(']');
          i++;
        }
        continue;
      }
      if (inClass && c == '[' && i + 1 < p.length() && p.charAt(i + 1) == ':') {
        int end = p.indexOf(":]", i + 2);
        int stop = end < 0 ? i + 1 : end + 2;
        out.append(p, i, stop);
        i = stop;
        continue;
      }
      if (inClass && c == ']') {
        inClass = false;
      }
      out.append(c);
      i++;
    }
    return out.toString();
  }
}
