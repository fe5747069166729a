package io.tabula.streams.filter;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
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
  private final Pattern pattern;

  private ByteRegex(Pattern pattern) {
    this.pattern = pattern;
  }

  /**
   * Compiles {@code patternBytes}.
   *
   * @throws InvalidFilterException naming {@code field} if the pattern is not valid RE2
   */
  static ByteRegex compile(byte[] patternBytes, String field) {
    String latin1 = new String(patternBytes, StandardCharsets.ISO_8859_1);
    try {
      return new ByteRegex(Pattern.compile(rewriteAnyByte(latin1)));
    } catch (PatternSyntaxException e) {
      throw new InvalidFilterException(field, "is not a valid RE2 regular expression: " + e.getMessage());
    }
  }

  /** True if the whole of {@code subject} matches. */
  boolean matches(byte[] subject) {
    return pattern.matcher(new String(subject, StandardCharsets.ISO_8859_1)).matches();
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
