package io.tabula.actors.master;

import io.tabula.protocol.kryo.KryoSerializable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An authorized view of a table, as the master records it: a subset of its rows (by key
 * prefix; none: every row) and, per family, of its columns (qualifiers named whole or by
 * prefix; a family not named is not in the view), with a policy of its own. Row prefixes and
 * qualifiers are bytes, held as ISO-8859-1 strings (one character per byte), so that the
 * record has value equality and the same text in every JVM. Immutable.
 *
 * @param name the view's id within its table
 * @param rowPrefixes the rows in the view, by prefix; empty: every row
 * @param families the columns in the view, by family
 * @param version grows with every change of the view's definition: its etag
 * @param bindings the view's own policy: members by role
 * @param policyVersion grows with every change of that policy
 */
public record ViewInfo(String name, List<String> rowPrefixes, Map<String, FamilySubset> families,
    boolean deletionProtection, long version, Map<String, List<String>> bindings, long policyVersion)
    implements KryoSerializable {
  public ViewInfo {
    rowPrefixes = List.copyOf(rowPrefixes);
    families = new TreeMap<>(families);
    bindings = TableAccess.sorted(bindings);
  }

  /** The columns of one family in a view: by whole qualifier, or by prefix ("" takes them all). */
  public record FamilySubset(List<String> qualifiers, List<String> qualifierPrefixes) implements KryoSerializable {
    public FamilySubset {
      qualifiers = List.copyOf(qualifiers);
      qualifierPrefixes = List.copyOf(qualifierPrefixes);
    }

    /** Whether every qualifier is in this subset. */
    public boolean whole() {
      return qualifierPrefixes.contains("");
    }
  }

  /** This view with its policy replaced. */
  ViewInfo withPolicy(Map<String, List<String>> newBindings) {
    return new ViewInfo(name, rowPrefixes, families, deletionProtection, version, newBindings, policyVersion + 1);
  }

  /** This view with {@code update}'s definition, its policy kept. */
  ViewInfo updatedTo(ViewInfo update) {
    return new ViewInfo(name, update.rowPrefixes(), update.families(), update.deletionProtection(), version + 1,
        bindings, policyVersion);
  }
}
