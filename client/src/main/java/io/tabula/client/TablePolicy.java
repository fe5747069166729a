package io.tabula.client;

import com.google.iam.v1.Binding;
import com.google.iam.v1.Policy;
import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A table's IAM policy as the node gave it: members by role, and the etag that a change of it
 * is made against (the node refuses a change against an older one). Immutable.
 *
 * @param bindings members by role, roles in name order
 * @param etag the policy's version, opaque
 */
public record TablePolicy(Map<String, List<String>> bindings, ByteString etag) {
  public TablePolicy {
    TreeMap<String, List<String>> sorted = new TreeMap<>();
    bindings.forEach((role, members) -> sorted.put(role, List.copyOf(members)));
    bindings = java.util.Collections.unmodifiableMap(sorted);
  }

  static TablePolicy of(Policy p) {
    Map<String, List<String>> out = new TreeMap<>();
    for (Binding b : p.getBindingsList()) {
      out.computeIfAbsent(b.getRole(), r -> new ArrayList<>()).addAll(b.getMembersList());
    }
    return new TablePolicy(out, p.getEtag());
  }

  /** {@code role} as IAM names it: {@code reader} is {@code roles/bigtable.reader}; a full name stays. */
  public static String role(String role) {
    return role.startsWith("roles/") ? role : "roles/bigtable." + role;
  }

  /** This policy with {@code member} in {@code role} (unchanged if it is already). */
  TablePolicy with(String role, String member) {
    Map<String, List<String>> out = new TreeMap<>(bindings);
    List<String> members = new ArrayList<>(out.getOrDefault(role, List.of()));
    if (!members.contains(member)) {
      members.add(member);
    }
    out.put(role, members);
    return new TablePolicy(out, etag);
  }

  /** This policy without {@code member} in {@code role}. */
  TablePolicy without(String role, String member) {
    Map<String, List<String>> out = new TreeMap<>(bindings);
    List<String> members = new ArrayList<>(out.getOrDefault(role, List.of()));
    members.remove(member);
    if (members.isEmpty()) {
      out.remove(role);
    } else {
      out.put(role, members);
    }
    return new TablePolicy(out, etag);
  }

  Policy toProto() {
    Policy.Builder p = Policy.newBuilder().setVersion(1).setEtag(etag);
    bindings.forEach((role, members) -> p.addBindings(Binding.newBuilder().setRole(role).addAllMembers(members)));
    return p.build();
  }
}
