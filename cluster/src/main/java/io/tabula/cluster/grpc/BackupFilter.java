package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.Backup;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.pekko.grpc.GrpcServiceException;

/**
 * The {@code filter} of ListBackups, parsed: the language the field comment of
 * {@code ListBackupsRequest.filter} describes, in the conventions of AIP-160.
 *
 * <pre>
 * filter     = [ expression ] ;                       (empty: every backup)
 * expression = factor { [ "AND" ] factor } ;           (side by side: AND)
 * factor     = term { "OR" term } ;                    (OR binds tighter than AND, as in AIP-160)
 * term       = ( "NOT" | "-" ) term | "(" expression ")" | comparison ;
 * comparison = field operator value ;
 * field      = name | source_table | state | start_time | end_time | expire_time | size_bytes ;
 * operator   = "&lt;" | "&gt;" | "&lt;=" | "&gt;=" | "!=" | "=" | ":" ;
 * value      = '"' { character | '\"' | "\'" | '\\' } '"'    (or the same in single quotes)
 *            | bare ;                                 (characters other than white space and ( ) " &lt; &gt; = !)
 * </pre>
 *
 * <p>The rules are case insensitive: keywords, field names, states and the text of names are
 * all matched without regard to case. What a comparison means depends on the field:
 *
 * <ul>
 *   <li>{@code name}, {@code source_table}: {@code :} with a bare value holds when the full
 *       resource name contains the value, and with a quoted one as {@code =} (the API's own
 *       examples: {@code name:"exact"} is the backup named "exact", {@code name:howl} any whose
 *       name contains "howl"); {@code =} when the value is the last segment of the name (the
 *       backup or table id) or the full name, {@code !=} when it is neither; {@code <},
 *       {@code >}, {@code <=}, {@code >=} compare the full name with a value holding a
 *       {@code /} and the id with any other.
 *   <li>{@code state}: the value is a name of {@link Backup.State} ({@code CREATING},
 *       {@code READY}); {@code :} is {@code =}; the others compare the enum's numbers, as
 *       order_by does.
 *   <li>{@code start_time}, {@code end_time}, {@code expire_time}: the value is an RFC 3339
 *       timestamp ({@code 2018-03-28T14:50:00Z}, also with fractional seconds or an offset; see
 *       {@link Rfc3339}),
 *       compared as an instant; {@code :} is {@code =}. An unset timestamp (the end of a backup
 *       still being made) satisfies only {@code !=}.
 *   <li>{@code size_bytes}: the value is a whole number; {@code :} is {@code =}.
 *   <li>{@code field:*} (a bare star) holds when the field has a value: a timestamp set, any
 *       other field not its default (AIP-160's presence test).
 * </ul>
 *
 * <p>Work is bounded: a filter is at most {@value #MAX_LENGTH} characters, nests (parentheses
 * and negations) at most {@value #MAX_DEPTH} deep, and is read in one pass without regular
 * expressions. Anything else is refused with INVALID_ARGUMENT naming {@code filter} and the
 * position (counted from 1) of what is wrong; no other exception comes out of {@link #parse}.
 *
 * <p>Immutable once parsed: thread-safe.
 */
final class BackupFilter {
  /** The longest filter taken, in characters. */
  static final int MAX_LENGTH = 4096;
  /** The deepest nesting of parentheses and negations taken. */
  static final int MAX_DEPTH = 50;

  private static final String FIELD = "filter";

  private final Expr expr;

  private BackupFilter(Expr expr) {
    this.expr = expr;
  }

  /** Parses {@code filter} (null or blank: every backup); throws INVALID_ARGUMENT naming {@code filter}. */
  static BackupFilter parse(String filter) {
    String s = filter == null ? "" : filter;
    if (s.length() > MAX_LENGTH) {
      throw GrpcErrors.invalid(FIELD, "is " + s.length() + " characters long; at most " + MAX_LENGTH
          + " are allowed");
    }
    return new BackupFilter(new Parser(s).filter());
  }

  boolean matches(Backup b) {
    return expr.test(b);
  }

  /**
   * The filter in one normal form: the same for filters that differ only in case, spacing,
   * quoting, redundant parentheses or an implicit AND, so a page token outlives such changes.
   */
  String canonical() {
    StringBuilder out = new StringBuilder();
    expr.canonical(out);
    return out.toString();
  }

  /** A comparison operator. */
  enum Op {
    LT("<"), LE("<="), GT(">"), GE(">="), NE("!="), EQ("="), HAS(":");

    private final String symbol;

    Op(String symbol) {
      this.symbol = symbol;
    }

    /** Whether the operator holds of a field whose comparison with the value is {@code c}. */
    boolean holds(int c) {
      return switch (this) {
        case LT -> c < 0;
        case LE -> c <= 0;
        case GT -> c > 0;
        case GE -> c >= 0;
        case NE -> c != 0;
        case EQ, HAS -> c == 0;
      };
    }
  }

  /** A parsed expression: a predicate on backups with a normal form. */
  private sealed interface Expr permits Everything, Junction, Not, Present, Text, StateIs, Time, Size {
    boolean test(Backup b);

    void canonical(StringBuilder out);
  }

  private record Everything() implements Expr {
    @Override
    public boolean test(Backup b) {
      return true;
    }

    @Override
    public void canonical(StringBuilder out) {}
  }

  /** Two or more terms joined by AND ({@code any} false) or by OR ({@code any} true). */
  private record Junction(boolean any, List<Expr> terms) implements Expr {
    @Override
    public boolean test(Backup b) {
      for (Expr t : terms) {
        if (t.test(b) == any) {
          return any;
        }
      }
      return !any;
    }

    @Override
    public void canonical(StringBuilder out) {
      out.append(any ? "(or" : "(and");
      for (Expr t : terms) {
        out.append(' ');
        t.canonical(out);
      }
      out.append(')');
    }
  }

  private record Not(Expr term) implements Expr {
    @Override
    public boolean test(Backup b) {
      return !term.test(b);
    }

    @Override
    public void canonical(StringBuilder out) {
      out.append("(not ");
      term.canonical(out);
      out.append(')');
    }
  }

  /** {@code field:*}. */
  private record Present(BackupField field) implements Expr {
    @Override
    public boolean test(Backup b) {
      return field.present(b);
    }

    @Override
    public void canonical(StringBuilder out) {
      out.append(field.wireName()).append(":*");
    }
  }

  /** A comparison of {@code name} or {@code source_table}; {@code value} is in lower case. */
  private record Text(BackupField field, Op op, String value) implements Expr {
    @Override
    public boolean test(Backup b) {
      String full = field.text(b).toLowerCase(Locale.ROOT);
      String id = full.substring(full.lastIndexOf('/') + 1);
      return switch (op) {
        case HAS -> full.contains(value);
        case EQ -> full.equals(value) || id.equals(value);
        case NE -> !full.equals(value) && !id.equals(value);
        case LT, LE, GT, GE -> op.holds((value.indexOf('/') >= 0 ? full : id).compareTo(value));
      };
    }

    @Override
    public void canonical(StringBuilder out) {
      // The length first, so no value can end early and pass for another comparison.
      out.append(field.wireName()).append(op.symbol).append(value.length()).append('"').append(value).append('"');
    }
  }

  /** A comparison of {@code state}, by the enum's numbers. */
  private record StateIs(Op op, Backup.State state) implements Expr {
    @Override
    public boolean test(Backup b) {
      return op.holds(Integer.compare(b.getStateValue(), state.getNumber()));
    }

    @Override
    public void canonical(StringBuilder out) {
      out.append(BackupField.STATE.wireName()).append(op.symbol).append(state.name());
    }
  }

  /** A comparison of a timestamp with the instant {@code seconds}, {@code nanos}. */
  private record Time(BackupField field, Op op, long seconds, int nanos) implements Expr {
    @Override
    public boolean test(Backup b) {
      if (!field.present(b)) {
        return op == Op.NE;
      }
      return op.holds(BackupField.compare(field.time(b), seconds, nanos));
    }

    @Override
    public void canonical(StringBuilder out) {
      out.append(field.wireName()).append(op.symbol).append(seconds).append('.').append(nanos);
    }
  }

  /** A comparison of {@code size_bytes}. */
  private record Size(Op op, long value) implements Expr {
    @Override
    public boolean test(Backup b) {
      return op.holds(Long.compare(b.getSizeBytes(), value));
    }

    @Override
    public void canonical(StringBuilder out) {
      out.append(BackupField.SIZE_BYTES.wireName()).append(op.symbol).append(value);
    }
  }

  /**
   * A recursive-descent parser over one filter, one method per rule of the grammar above; each
   * nesting (a parenthesis, a negation) counts against {@link #MAX_DEPTH} before it recurses.
   * Used once, by one thread.
   */
  private static final class Parser {
    private final String s;
    private int pos;
    private int depth;

    Parser(String s) {
      this.s = s;
    }

    Expr filter() {
      skipSpace();
      if (atEnd()) {
        return new Everything();
      }
      Expr e = expression();
      if (!atEnd()) {
        // An expression stops only at the end or at a ')' that no '(' opened.
        throw error(pos, "')' without a '(' before it");
      }
      return e;
    }

    private Expr expression() {
      List<Expr> terms = new ArrayList<>();
      terms.add(factor());
      while (true) {
        skipSpace();
        if (atEnd() || peek() == ')') {
          break;
        }
        if (keyword("AND")) {
          pos += "AND".length();
        }
        terms.add(factor());
      }
      return terms.size() == 1 ? terms.get(0) : new Junction(false, List.copyOf(terms));
    }

    private Expr factor() {
      List<Expr> terms = new ArrayList<>();
      terms.add(term());
      while (true) {
        skipSpace();
        if (!keyword("OR")) {
          break;
        }
        pos += "OR".length();
        terms.add(term());
      }
      return terms.size() == 1 ? terms.get(0) : new Junction(true, List.copyOf(terms));
    }

    private Expr term() {
      skipSpace();
      int start = pos;
      if (atEnd()) {
        throw error(pos, "expected a comparison, found the end of the filter");
      }
      boolean not = keyword("NOT");
      if (not || peek() == '-') {
        pos += not ? "NOT".length() : 1;
        enter(start);
        Expr negated = term();
        depth--;
        return new Not(negated);
      }
      if (peek() == '(') {
        pos++;
        enter(start);
        skipSpace();
        if (!atEnd() && peek() == ')') {
          throw error(start, "empty parentheses");
        }
        Expr e = expression();
        if (atEnd()) {
          throw error(start, "this '(' is never closed");
        }
        pos++;
        depth--;
        return e;
      }
      return comparison();
    }

    private Expr comparison() {
      int start = pos;
      while (!atEnd() && identifierChar(peek())) {
        pos++;
      }
      if (pos == start) {
        throw error(start, "expected a field name, found " + found(start));
      }
      String name = s.substring(start, pos);
      if (name.equalsIgnoreCase("AND") || name.equalsIgnoreCase("OR")) {
        throw error(start, "expected a comparison, found the keyword " + name.toUpperCase(Locale.ROOT));
      }
      BackupField field = BackupField.named(name).orElseThrow(() -> error(start,
          "unknown field \"" + shown(name) + "\"; the fields are " + BackupField.names()));
      skipSpace();
      int opAt = pos;
      Op op = operator();
      if (op == null) {
        throw error(opAt, "expected an operator (<, >, <=, >=, !=, =, :) after " + field + ", found " + found(opAt));
      }
      skipSpace();
      int valueAt = pos;
      boolean quoted = !atEnd() && (peek() == '"' || peek() == '\'');
      String value = quoted ? quoted() : bare();
      if (op == Op.HAS && !quoted && value.equals("*")) {
        return new Present(field);
      }
      return switch (field.kind()) {
        // As the API's own example has it: name:"exact" is the name "exact", name:howl contains "howl".
        case TEXT -> new Text(field, op == Op.HAS && quoted ? Op.EQ : op, value.toLowerCase(Locale.ROOT));
        case STATE -> new StateIs(op, state(value, valueAt));
        case TIME -> {
          Instant t = Rfc3339.instant(value).orElseThrow(() -> error(valueAt, field
              + " takes a timestamp such as 2018-03-28T14:50:00Z (RFC 3339), not \"" + shown(value) + "\""));
          yield new Time(field, op, t.getEpochSecond(), t.getNano());
        }
        case NUMBER -> new Size(op, number(value, valueAt));
      };
    }

    /** The operator at {@code pos}, consumed; null if there is none. */
    private Op operator() {
      char c = atEnd() ? 0 : peek();
      char next = pos + 1 < s.length() ? s.charAt(pos + 1) : 0;
      Op op = switch (c) {
        case '<' -> next == '=' ? Op.LE : Op.LT;
        case '>' -> next == '=' ? Op.GE : Op.GT;
        case '!' -> next == '=' ? Op.NE : null;
        case '=' -> Op.EQ;
        case ':' -> Op.HAS;
        default -> null;
      };
      if (op != null) {
        pos += op.symbol.length();
      }
      return op;
    }

    private String quoted() {
      int open = pos;
      char quote = s.charAt(pos++);
      StringBuilder out = new StringBuilder();
      while (true) {
        if (atEnd()) {
          throw error(open, "this string is never closed");
        }
        char c = s.charAt(pos++);
        if (c == quote) {
          return out.toString();
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (atEnd()) {
          throw error(open, "this string is never closed");
        }
        char escaped = s.charAt(pos++);
        if (escaped != '"' && escaped != '\'' && escaped != '\\') {
          throw error(pos - 2, "unknown escape \\" + shown(String.valueOf(escaped))
              + " in a string; only \\\", \\' and \\\\ are escapes");
        }
        out.append(escaped);
      }
    }

    private String bare() {
      int start = pos;
      while (!atEnd() && bareChar(peek())) {
        pos++;
      }
      if (pos == start) {
        throw error(start, "expected a value, found " + found(start));
      }
      return s.substring(start, pos);
    }

    private Backup.State state(String value, int at) {
      StringBuilder names = new StringBuilder();
      for (Backup.State st : Backup.State.values()) {
        if (st == Backup.State.UNRECOGNIZED) {
          continue;
        }
        if (st.name().equalsIgnoreCase(value)) {
          return st;
        }
        names.append(names.isEmpty() ? "" : ", ").append(st.name());
      }
      throw error(at, "state is one of " + names + ", not \"" + shown(value) + "\"");
    }

    private long number(String value, int at) {
      int digitsFrom = !value.isEmpty() && (value.charAt(0) == '-' || value.charAt(0) == '+') ? 1 : 0;
      int count = value.length() - digitsFrom;
      if (count == 0 || count > 19 || !Rfc3339.digits(value, digitsFrom, value.length())) {
        throw error(at, "size_bytes takes a whole number, not \"" + shown(value) + "\"");
      }
      try {
        return Long.parseLong(value);
      } catch (NumberFormatException e) {
        throw error(at, "size_bytes takes a 64-bit number; " + value + " is out of range");
      }
    }

    private void enter(int at) {
      if (++depth > MAX_DEPTH) {
        throw error(at, "nested more than " + MAX_DEPTH + " deep (parentheses and negations)");
      }
    }

    /** Whether the keyword {@code k} (any case) is at {@code pos}, as a whole word. */
    private boolean keyword(String k) {
      int end = pos + k.length();
      return s.regionMatches(true, pos, k, 0, k.length()) && (end == s.length() || !identifierChar(s.charAt(end)));
    }

    private void skipSpace() {
      while (!atEnd() && Character.isWhitespace(peek())) {
        pos++;
      }
    }

    private boolean atEnd() {
      return pos >= s.length();
    }

    private char peek() {
      return s.charAt(pos);
    }

    /** What is at {@code at}, for a message: the word there, or the end. */
    private String found(int at) {
      if (at >= s.length()) {
        return "the end of the filter";
      }
      int end = at + 1;
      while (end < s.length() && end - at <= 40 && !Character.isWhitespace(s.charAt(end))) {
        end++;
      }
      return "\"" + shown(s.substring(at, end)) + "\"";
    }

    private GrpcServiceException error(int at, String problem) {
      return GrpcErrors.invalid(FIELD, "position " + (at + 1) + ": " + problem);
    }
  }

  private static boolean identifierChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  private static boolean bareChar(char c) {
    return !Character.isWhitespace(c) && "()\"<>=!".indexOf(c) < 0;
  }

  /**
   * {@code text} fit for a message: at most 40 characters, then "...", with each control
   * character and each lone half of a surrogate pair written as a Java escape (backslash, u, four
   * hex digits), since a lone half would not survive the status's UTF-8.
   */
  static String shown(String text) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    for (; i < text.length() && i < 40; i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
        out.append(c).append(text.charAt(++i));
      } else if (Character.isISOControl(c) || Character.isSurrogate(c)) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return i < text.length() ? out.append("...").toString() : out.toString();
  }
}
