package io.tabula.cluster.security;

import java.util.regex.Pattern;

/**
 * Who a call is made by: an IAM member string, {@code user:ana@example.com} or
 * {@code serviceAccount:x@p.iam.gserviceaccount.com}, a type, a colon and a name, without
 * white space or control characters. Immutable.
 */
public record Principal(String member) {
  private static final Pattern MEMBER = Pattern.compile("[A-Za-z]+:[^\\s\\p{Cntrl}]+");

  /** @throws IllegalArgumentException when {@code member} is not {@code type:name} */
  public Principal {
    if (member == null || !MEMBER.matcher(member).matches()) {
      throw new IllegalArgumentException("a principal is an IAM member, type:name (user:ana@example.com), was "
          + (member == null ? "null" : "'" + member + "'"));
    }
  }

  /** True when {@code member} would make a principal. */
  static boolean isMember(String member) {
    return member != null && MEMBER.matcher(member).matches();
  }
}
