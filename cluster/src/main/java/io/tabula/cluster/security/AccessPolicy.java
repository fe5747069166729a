package io.tabula.cluster.security;

import com.google.iam.v1.Binding;
import com.google.iam.v1.Policy;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * IAM policies as Cloud Bigtable reads them: bindings of {@link Roles roles} to members, a
 * member being a principal ({@code user:ana@example.com}, {@code serviceAccount:...}, {@code
 * cert:CN=...}) or {@code allAuthenticatedUsers}. A principal holds a permission on a
 * resource when a binding of a role that includes it names the principal, in the policy of
 * the resource or of a resource above it (a view's table, a table's instance). Conditions are
 * not supported: a binding with one is refused where policies are set. Stateless.
 */
public final class AccessPolicy {
  /** The member every authenticated principal matches. */
  public static final String ALL_AUTHENTICATED = "allAuthenticatedUsers";

  private AccessPolicy() {}

  /** Whether {@code policy} grants {@code permission} to {@code principal}. */
  public static boolean allows(Policy policy, Principal principal, String permission) {
    for (Binding b : policy.getBindingsList()) {
      if (Roles.grants(b.getRole(), permission)
          && (b.getMembersList().contains(principal.member()) || b.getMembersList().contains(ALL_AUTHENTICATED))) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code bindings} (members by role, as a table's or a view's policy holds them) grant {@code permission}. */
  public static boolean allows(Map<String, List<String>> bindings, Principal principal, String permission) {
    for (Map.Entry<String, List<String>> b : bindings.entrySet()) {
      if (Roles.grants(b.getKey(), permission)
          && (b.getValue().contains(principal.member()) || b.getValue().contains(ALL_AUTHENTICATED))) {
        return true;
      }
    }
    return false;
  }

  /**
   * The instance's policy from the {@code tabula.security} settings: {@code admins} (members
   * who hold {@code roles/bigtable.admin}) and {@code bindings}, a list of {@code {role = ...,
   * members = [...]}}. Throws {@link IllegalArgumentException} naming the key for a role Tabula
   * does not know or a member that is not one.
   */
  public static Policy instance(Config security) {
    Map<String, Set<String>> byRole = new LinkedHashMap<>();
    if (security.hasPath("admins")) {
      for (String member : security.getStringList("admins")) {
        byRole.computeIfAbsent(Roles.ADMIN, r -> new LinkedHashSet<>()).add(checkedMember("admins", member));
      }
    }
    if (security.hasPath("bindings")) {
      List<? extends Config> bindings = security.getConfigList("bindings");
      for (int i = 0; i < bindings.size(); i++) {
        Config b = bindings.get(i);
        String key = "tabula.security.bindings[" + i + "]";
        try {
          String role = b.getString("role");
          if (!Roles.known(role)) {
            throw new IllegalArgumentException(key + ".role: " + role + " is not a role Tabula knows ("
                + String.join(", ", Roles.names()) + ")");
          }
          for (String member : b.getStringList("members")) {
            byRole.computeIfAbsent(role, r -> new LinkedHashSet<>()).add(checkedMember(key + ".members", member));
          }
        } catch (ConfigException e) {
          throw new IllegalArgumentException(key + ": " + e.getMessage(), e);
        }
      }
    }
    Policy.Builder p = Policy.newBuilder().setVersion(1);
    byRole.forEach((role, members) -> p.addBindings(Binding.newBuilder().setRole(role).addAllMembers(members)));
    return p.build();
  }

  /** What is wrong with {@code member} as an IAM member, or null when nothing is. */
  public static String memberProblem(String member) {
    if (member.equals(ALL_AUTHENTICATED)) {
      return null;
    }
    int colon = member.indexOf(':');
    if (colon <= 0 || colon == member.length() - 1) {
      return "'" + member + "' is not a member: write user:EMAIL, serviceAccount:EMAIL, cert:SUBJECT or "
          + ALL_AUTHENTICATED;
    }
    String kind = member.substring(0, colon);
    if (!List.of("user", "serviceAccount", "cert").contains(kind)) {
      return "'" + kind + ":' is not a kind of member Tabula knows (user, serviceAccount, cert; groups are not"
          + " resolved)";
    }
    return null;
  }

  private static String checkedMember(String key, String member) {
    String problem = memberProblem(member);
    if (problem != null) {
      throw new IllegalArgumentException(key + ": " + problem);
    }
    return member;
  }

  /** The members {@code policy} binds to {@code role}, in order. */
  public static List<String> members(Policy policy, String role) {
    List<String> out = new ArrayList<>();
    for (Binding b : policy.getBindingsList()) {
      if (b.getRole().equals(role)) {
        out.addAll(b.getMembersList());
      }
    }
    return out;
  }
}
