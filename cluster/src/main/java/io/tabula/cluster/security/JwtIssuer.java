package io.tabula.cluster.security;

import java.util.List;
import java.util.Objects;

/**
 * An issuer whose JWTs are accepted ({@code tabula.security.jwt.issuers}): tokens whose
 * {@code iss} is {@code issuer}, signed by one of {@code keys}, with an {@code aud} among
 * {@code audiences}; the caller is {@code principalPrefix} followed by the string claim
 * {@code principalClaim}. Immutable.
 */
public record JwtIssuer(String issuer, List<String> audiences, List<VerificationKey> keys, String principalClaim,
    String principalPrefix) {
  /** @throws IllegalArgumentException when a list is empty or a string is empty where it may not be */
  public JwtIssuer {
    Objects.requireNonNull(principalPrefix, "principalPrefix");
    if (issuer == null || issuer.isEmpty()) {
      throw new IllegalArgumentException("an issuer needs its iss value");
    }
    if (audiences.isEmpty() || audiences.stream().anyMatch(String::isEmpty)) {
      throw new IllegalArgumentException("an issuer needs at least one audience, none empty");
    }
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("an issuer needs at least one key");
    }
    if (principalClaim == null || principalClaim.isEmpty()) {
      throw new IllegalArgumentException("an issuer needs the name of the claim that holds the principal");
    }
    audiences = List.copyOf(audiences);
    keys = List.copyOf(keys);
  }
}
