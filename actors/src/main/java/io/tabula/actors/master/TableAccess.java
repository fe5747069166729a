package io.tabula.actors.master;

import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refused;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Who may do what with a table, as the master records it: the table's IAM policy (bindings of
 * roles to members, as Cloud Bigtable's {@code SetIamPolicy} sets them) and its authorized
 * views, each with a policy of its own. {@code policyVersion} grows with every change of the
 * policy and is its etag, so that two admins cannot overwrite each other's change. Immutable;
 * its maps are {@code TreeMap}s and its lists immutable, so its text is the same in every JVM
 * ({@link DirectoryDigest#table}).
 *
 * @param bindings members by role
 * @param policyVersion 0 before the policy was first set
 * @param views the table's authorized views, by id
 */
public record TableAccess(Map<String, List<String>> bindings, long policyVersion, Map<String, ViewInfo> views)
    implements KryoSerializable {
  /** A table no one changed the access of. */
  public static final TableAccess NONE = new TableAccess(Map.of(), 0, Map.of());

  public TableAccess {
    bindings = sorted(bindings);
    views = new TreeMap<>(views);
  }

  /** A change of a table's access, as an admin call asks it; {@code ifVersion} -1 takes any version. */
  public sealed interface Change extends KryoSerializable {
    /** The policy of the table ({@code view} empty) or of one of its views. */
    record SetPolicy(String view, Map<String, List<String>> bindings, long ifVersion) implements Change {}

    record CreateView(ViewInfo view) implements Change {}

    /** Replaces the view's subset and deletion protection (its policy stays). */
    record UpdateView(ViewInfo view, long ifVersion) implements Change {}

    record DeleteView(String name, long ifVersion) implements Change {}
  }

  /**
   * The most a table's access may hold, in characters of its members, prefixes and qualifiers:
   * it travels whole with the table's changes between nodes (a message of at most 1 MiB) and
   * every node holds it.
   */
  public static final int MAX_CHARS = 512 * 1024;

  /** This access after {@code c}; throws {@link Refused} for a change that cannot be made. */
  public TableAccess after(Change c) {
    TableAccess next = changed(c);
    long chars = next.chars();
    if (chars > MAX_CHARS) {
      throw Refusal.of(ErrorCode.RESOURCE_EXHAUSTED, "the table's policies and authorized views would hold "
          + chars + " characters, over the limit of " + MAX_CHARS).exception();
    }
    return next;
  }

  /** About what this access weighs: the characters of its names, members, prefixes and qualifiers. */
  long chars() {
    long n = chars(bindings);
    for (ViewInfo v : views.values()) {
      n += v.name().length() + chars(v.bindings()) + v.rowPrefixes().stream().mapToLong(p -> p.length() + 8).sum();
      for (Map.Entry<String, ViewInfo.FamilySubset> f : v.families().entrySet()) {
        n += f.getKey().length() + f.getValue().qualifiers().stream().mapToLong(q -> q.length() + 8).sum()
            + f.getValue().qualifierPrefixes().stream().mapToLong(q -> q.length() + 8).sum();
      }
    }
    return n;
  }

  private static long chars(Map<String, List<String>> bindings) {
    long n = 0;
    for (Map.Entry<String, List<String>> b : bindings.entrySet()) {
      n += b.getKey().length() + b.getValue().stream().mapToLong(m -> m.length() + 8).sum();
    }
    return n;
  }

  private TableAccess changed(Change c) {
    if (c instanceof Change.SetPolicy p && p.view().isEmpty()) {
      checkVersion("the table's policy", policyVersion, p.ifVersion());
      return new TableAccess(p.bindings(), policyVersion + 1, views);
    }
    if (c instanceof Change.SetPolicy p) {
      ViewInfo v = existing(p.view());
      checkVersion("the policy of authorized view " + v.name(), v.policyVersion(), p.ifVersion());
      return withView(v.withPolicy(p.bindings()));
    }
    if (c instanceof Change.CreateView x) {
      if (views.containsKey(x.view().name())) {
        throw Refusal.of(ErrorCode.ALREADY_EXISTS, "authorized view " + x.view().name() + " already exists")
            .exception();
      }
      return withView(x.view());
    }
    if (c instanceof Change.UpdateView x) {
      ViewInfo v = existing(x.view().name());
      checkVersion("authorized view " + v.name(), v.version(), x.ifVersion());
      return withView(v.updatedTo(x.view()));
    }
    Change.DeleteView x = (Change.DeleteView) c;
    ViewInfo v = existing(x.name());
    checkVersion("authorized view " + v.name(), v.version(), x.ifVersion());
    if (v.deletionProtection()) {
      throw Refusal.of(ErrorCode.FAILED_PRECONDITION, "authorized view " + v.name() + " is protected from"
          + " deletion: update it with deletion_protection false first").exception();
    }
    Map<String, ViewInfo> out = new TreeMap<>(views);
    out.remove(x.name());
    return new TableAccess(bindings, policyVersion, out);
  }

  private TableAccess withView(ViewInfo v) {
    Map<String, ViewInfo> out = new TreeMap<>(views);
    out.put(v.name(), v);
    return new TableAccess(bindings, policyVersion, out);
  }

  private ViewInfo existing(String name) {
    ViewInfo v = views.get(name);
    if (v == null) {
      throw Refusal.of(ErrorCode.NOT_FOUND, "authorized view " + name + " not found").exception();
    }
    return v;
  }

  private static void checkVersion(String what, long version, long ifVersion) {
    if (ifVersion >= 0 && ifVersion != version) {
      throw Refusal.of(ErrorCode.ABORTED, "etag: " + what + " changed since it was read (someone else changed"
          + " it): read it again and apply the change to what it is now").exception();
    }
  }

  /** {@code m} as a TreeMap of immutable lists. */
  static Map<String, List<String>> sorted(Map<String, List<String>> m) {
    TreeMap<String, List<String>> out = new TreeMap<>();
    m.forEach((k, v) -> out.put(k, List.copyOf(v)));
    return out;
  }
}
