package io.tabula.cluster.security;

import java.util.Objects;

/**
 * What {@link Authenticator#authenticate} found out about one call: who makes it, or why its
 * credentials are refused. Immutable values, matched by type.
 */
public sealed interface Authentication permits Authentication.Authenticated, Authentication.Refused {
  /** The call is made by {@code principal}. */
  record Authenticated(Principal principal) implements Authentication {
    public Authenticated {
      Objects.requireNonNull(principal, "principal");
    }
  }

  /**
   * The call's credentials are refused. {@code reason} is for the client: it names what is
   * wrong and never holds the token or any part of it (nor text decoded from it).
   */
  record Refused(AuthProblem problem, String reason) implements Authentication {
    public Refused {
      Objects.requireNonNull(problem, "problem");
      Objects.requireNonNull(reason, "reason");
    }
  }
}
