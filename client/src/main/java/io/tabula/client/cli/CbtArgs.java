package io.tabula.client.cli;

import io.tabula.client.Query;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * The {@code key=value} arguments {@code cbt} takes after a command's positional ones
 * ({@code start=a end=b count=10}), and the few bare words it takes as flags
 * ({@code reversed}). Every mistake is a usage error of the command.
 */
final class CbtArgs {
  private final CommandLine cmd;
  private final Map<String, String> values = new LinkedHashMap<>();

  private CbtArgs(CommandLine cmd) {
    this.cmd = cmd;
  }

  /**
   * Reads {@code args}: each is {@code key=value} with a key from {@code keys}, or a word
   * from {@code flags} (stored as "true"); a key may appear once.
   */
  static CbtArgs parse(CommandLine cmd, List<String> args, Set<String> keys, Set<String> flags) {
    CbtArgs a = new CbtArgs(cmd);
    for (String arg : args) {
      int eq = arg.indexOf('=');
      String key = eq < 0 ? arg : arg.substring(0, eq);
      String value = eq < 0 ? "true" : arg.substring(eq + 1);
      if (!keys.contains(key) && !flags.contains(key)) {
        Set<String> known = new TreeSet<>(keys);
        known.addAll(flags);
        throw new ParameterException(cmd, "unknown argument '" + arg + "' (expected " + String.join(", ", known.stream()
            .map(k -> keys.contains(k) ? k + "=..." : k).toList()) + ")");
      }
      if (eq < 0 && !flags.contains(key)) {
        throw new ParameterException(cmd, "'" + key + "' needs a value: " + key + "=...");
      }
      if (a.values.put(key, value) != null) {
        throw new ParameterException(cmd, "'" + key + "' is given twice");
      }
    }
    return a;
  }

  String get(String key) {
    return values.get(key);
  }

  boolean has(String key) {
    return values.containsKey(key);
  }

  /** A flag given as a bare word or as {@code key=true}/{@code key=false}. */
  boolean flag(String key) {
    String v = values.get(key);
    if (v == null || v.equals("false")) {
      return false;
    }
    if (!v.equals("true")) {
      throw new ParameterException(cmd, "'" + key + "' is true or false, got '" + v + "'");
    }
    return true;
  }

  /** The value of {@code key} as a positive integer, or 0 if it is absent. */
  long positive(String key) {
    String v = values.get(key);
    if (v == null) {
      return 0;
    }
    try {
      long n = Long.parseLong(v);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new ParameterException(cmd, key + "=" + v + ": expected a positive whole number");
  }

  /**
   * Adds the rows {@code start=} (inclusive) and {@code end=} (exclusive), or
   * {@code prefix=}, to {@code q}; none of them means every row.
   */
  void rowsTo(Query q) {
    String start = values.get("start");
    String end = values.get("end");
    String prefix = values.get("prefix");
    if (prefix != null && (start != null || end != null)) {
      throw new ParameterException(cmd, "give prefix= or start=/end=, not both");
    }
    if (prefix != null) {
      if (prefix.isEmpty()) {
        throw new ParameterException(cmd, "prefix= must not be empty");
      }
      q.prefix(prefix);
    } else if (start != null || end != null) {
      String s = start == null ? "" : start;
      String e = end == null ? "" : end;
      try {
        q.range(s, e);
      } catch (IllegalArgumentException ex) {
        throw new ParameterException(cmd, "start=" + s + " end=" + e + ": " + ex.getMessage());
      }
    }
  }

  /**
   * Adds the {@code columns=} list to {@code q}: {@code family:qualifier} for one column,
   * {@code family} or {@code family:} for a whole family, separated by commas.
   */
  void columnsTo(Query q) {
    String spec = values.get("columns");
    if (spec == null) {
      return;
    }
    for (String c : spec.split(",", -1)) {
      int colon = c.indexOf(':');
      String family = colon < 0 ? c : c.substring(0, colon);
      if (family.isEmpty()) {
        throw new ParameterException(cmd, "columns=" + spec + ": '" + c
            + "' has no family (family or family:qualifier)");
      }
      if (colon < 0 || colon == c.length() - 1) {
        q.families(family);
      } else {
        q.column(family, c.substring(colon + 1));
      }
    }
  }

  /** Adds {@code versions=} (or cbt's {@code cells-per-column=}) to {@code q}. */
  void versionsTo(Query q) {
    if (has("versions") && has("cells-per-column")) {
      throw new ParameterException(cmd, "give versions= or cells-per-column=, not both");
    }
    long n = Math.max(positive("versions"), positive("cells-per-column"));
    if (n > Integer.MAX_VALUE) {
      throw new ParameterException(cmd, "versions=" + n + " is too large");
    }
    if (n > 0) {
      q.versions((int) n);
    }
  }
}
