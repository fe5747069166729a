package io.tabula.client;

import com.google.bigtable.admin.v2.GcRule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A column family's garbage-collection policy (paper §5.2 "garbage collection"): keep at
 * most n versions, drop versions older than an age, or a union ("or": drop what any rule
 * drops) or intersection ("and": drop what every rule drops) of policies. Written in
 * {@code cbt}'s syntax by {@link #toString} and read back by {@link #parse}:
 * {@code never}, {@code maxversions=3}, {@code maxage=7d}, {@code maxage=1h or maxversions=2},
 * parentheses for grouping. Immutable.
 */
public sealed interface GcPolicy {
  /** Keep every version. */
  record Never() implements GcPolicy {
    @Override
    public String toString() {
      return "never";
    }
  }

  record MaxVersions(int versions) implements GcPolicy {
    public MaxVersions {
      if (versions < 1) {
        throw new IllegalArgumentException("maxversions must be at least 1, was " + versions);
      }
    }

    @Override
    public String toString() {
      return "maxversions=" + versions;
    }
  }

  record MaxAge(Duration age) implements GcPolicy {
    public MaxAge {
      if (age.isNegative() || age.isZero()) {
        throw new IllegalArgumentException("maxage must be positive, was " + age);
      }
    }

    /** The age in the largest unit that divides it exactly; milliseconds, the finest the syntax has, drop the rest. */
    @Override
    public String toString() {
      if (age.getNano() != 0) {
        return "maxage=" + age.toMillis() + "ms";
      }
      long s = age.getSeconds();
      if (s % 86_400 == 0) {
        return "maxage=" + s / 86_400 + "d";
      }
      if (s % 3_600 == 0) {
        return "maxage=" + s / 3_600 + "h";
      }
      return s % 60 == 0 ? "maxage=" + s / 60 + "m" : "maxage=" + s + "s";
    }
  }

  /** Drops a version when any of the policies would. */
  record Union(List<GcPolicy> policies) implements GcPolicy {
    public Union {
      policies = List.copyOf(policies);
    }

    @Override
    public String toString() {
      return join(policies, " or ");
    }
  }

  /** Drops a version only when every one of the policies would. */
  record Intersection(List<GcPolicy> policies) implements GcPolicy {
    public Intersection {
      policies = List.copyOf(policies);
    }

    @Override
    public String toString() {
      return join(policies, " and ");
    }
  }

  static GcPolicy never() {
    return new Never();
  }

  static GcPolicy maxVersions(int n) {
    return new MaxVersions(n);
  }

  static GcPolicy maxAge(Duration age) {
    return new MaxAge(age);
  }

  static GcPolicy or(GcPolicy... policies) {
    return new Union(List.of(policies));
  }

  static GcPolicy and(GcPolicy... policies) {
    return new Intersection(List.of(policies));
  }

  private static String join(List<GcPolicy> policies, String op) {
    List<String> parts = new ArrayList<>();
    for (GcPolicy p : policies) {
      String s = p.toString();
      parts.add(p instanceof Union || p instanceof Intersection ? "(" + s + ")" : s);
    }
    return String.join(op, parts);
  }

  /** The policy in the admin API's wire form. */
  default GcRule toProto() {
    if (this instanceof MaxVersions v) {
      return GcRule.newBuilder().setMaxNumVersions(v.versions()).build();
    }
    if (this instanceof MaxAge a) {
      return GcRule.newBuilder().setMaxAge(com.google.protobuf.Duration.newBuilder().setSeconds(a.age().getSeconds())
          .setNanos(a.age().getNano())).build();
    }
    if (this instanceof Union u) {
      GcRule.Union.Builder b = GcRule.Union.newBuilder();
      u.policies().forEach(p -> b.addRules(p.toProto()));
      return GcRule.newBuilder().setUnion(b).build();
    }
    if (this instanceof Intersection i) {
      GcRule.Intersection.Builder b = GcRule.Intersection.newBuilder();
      i.policies().forEach(p -> b.addRules(p.toProto()));
      return GcRule.newBuilder().setIntersection(b).build();
    }
    return GcRule.getDefaultInstance();
  }

  static GcPolicy fromProto(GcRule rule) {
    return switch (rule.getRuleCase()) {
      case MAX_NUM_VERSIONS -> new MaxVersions(rule.getMaxNumVersions());
      case MAX_AGE -> new MaxAge(Duration.ofSeconds(rule.getMaxAge().getSeconds(), rule.getMaxAge().getNanos()));
      case UNION -> new Union(rule.getUnion().getRulesList().stream().map(GcPolicy::fromProto).toList());
      case INTERSECTION -> new Intersection(rule.getIntersection().getRulesList().stream()
          .map(GcPolicy::fromProto).toList());
      case RULE_NOT_SET -> new Never();
    };
  }

  /** Reads a policy in cbt's syntax; IllegalArgumentException naming the part it cannot read. */
  static GcPolicy parse(String text) {
    return new Parser(text).policy();
  }

  /** A recursive-descent reader of the policy syntax: or-terms of and-terms of atoms or groups. */
  final class Parser {
    private static final Pattern TOKEN = Pattern.compile("\\s*(\\(|\\)|[A-Za-z]+=[0-9]+[a-z]*|[A-Za-z]+)");
    private static final Pattern AGE = Pattern.compile("([0-9]+)(ms|s|m|h|d)");

    private final String text;
    private final List<String> tokens = new ArrayList<>();
    private int at;

    private Parser(String text) {
      this.text = text;
      Matcher m = TOKEN.matcher(text);
      int end = 0;
      while (m.lookingAt()) {
        tokens.add(m.group(1));
        end = m.end();
        m.region(end, text.length());
      }
      if (!text.substring(end).isBlank()) {
        throw new IllegalArgumentException("gc policy '" + text + "': cannot read '" + text.substring(end).trim() + "'");
      }
    }

    private GcPolicy policy() {
      GcPolicy p = or();
      if (at != tokens.size()) {
        throw new IllegalArgumentException("gc policy '" + text + "': unexpected '" + tokens.get(at) + "'");
      }
      return p;
    }

    private GcPolicy or() {
      List<GcPolicy> terms = new ArrayList<>(List.of(and()));
      while (at < tokens.size() && tokens.get(at).equalsIgnoreCase("or")) {
        at++;
        terms.add(and());
      }
      return terms.size() == 1 ? terms.get(0) : new Union(terms);
    }

    private GcPolicy and() {
      List<GcPolicy> terms = new ArrayList<>(List.of(atom()));
      while (at < tokens.size() && tokens.get(at).equalsIgnoreCase("and")) {
        at++;
        terms.add(atom());
      }
      return terms.size() == 1 ? terms.get(0) : new Intersection(terms);
    }

    private GcPolicy atom() {
      if (at >= tokens.size()) {
        throw new IllegalArgumentException("gc policy '" + text + "': a rule is missing at the end");
      }
      String t = tokens.get(at++);
      if (t.equals("(")) {
        GcPolicy inner = or();
        if (at >= tokens.size() || !tokens.get(at++).equals(")")) {
          throw new IllegalArgumentException("gc policy '" + text + "': missing ')'");
        }
        return inner;
      }
      String lower = t.toLowerCase(Locale.ROOT);
      if (lower.equals("never")) {
        return new Never();
      }
      try {
        if (lower.startsWith("maxversions=")) {
          return new MaxVersions(Integer.parseInt(lower.substring("maxversions=".length())));
        }
        if (lower.startsWith("maxage=")) {
          return new MaxAge(age(t, lower.substring("maxage=".length())));
        }
      } catch (NumberFormatException | ArithmeticException e) {
        throw new IllegalArgumentException("gc policy '" + text + "': the number in '" + t + "' is too large", e);
      }
      throw new IllegalArgumentException("gc policy '" + text + "': unknown rule '" + t
          + "' (expected never, maxversions=N or maxage=N[ms|s|m|h|d])");
    }

    private Duration age(String token, String value) {
      Matcher m = AGE.matcher(value);
      if (!m.matches()) {
        throw new IllegalArgumentException("gc policy '" + text + "': maxage needs a number and a unit "
            + "(ms, s, m, h or d), got '" + token + "'");
      }
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
  }
}
