package io.tabula.cluster.security;

/**
 * Why a call's credentials were refused: matched by code (each maps to UNAUTHENTICATED, or
 * HTTP 401, in the one place that answers), while the refusal's reason is for people.
 */
public enum AuthProblem {
  /** No {@code authorization} header. */
  MISSING(false),
  /** Not {@code Bearer <token>}, a token with characters RFC 6750 does not allow, or a JWT that does not parse. */
  MALFORMED(true),
  /** A header longer than {@link Authenticator#MAX_HEADER_CHARS}, refused before it is parsed. */
  TOO_LARGE(false),
  /** A token that is neither a configured static token nor a JWT. */
  UNKNOWN_TOKEN(false),
  /** A JWT with {@code alg: none}: no signature at all. */
  UNSIGNED(true),
  /** A JWS algorithm not accepted: HMAC (no shared secret is ever configured), or one unknown here. */
  UNSUPPORTED_ALGORITHM(true),
  /** A JWS whose {@code alg} does not fit the key its issuer and {@code kid} name (an RSA key for ES256...). */
  ALGORITHM_MISMATCH(true),
  /** A JWS whose signature does not verify with its issuer's key. */
  BAD_SIGNATURE(true),
  /** A JWT whose {@code exp} has passed, beyond the clock skew. */
  EXPIRED(true),
  /** A JWT whose {@code nbf} or {@code iat} is ahead of the clock, beyond the clock skew. */
  NOT_YET_VALID(false),
  /** A JWT whose {@code aud} (or, for a service account, {@code scope}) names nothing accepted here. */
  WRONG_AUDIENCE(true),
  /** A JWT whose {@code iss} is neither a configured issuer nor a configured service account. */
  UNKNOWN_ISSUER(true),
  /** A JWT whose {@code kid} names none of its issuer's keys. */
  UNKNOWN_KEY(true),
  /** A JWT without a claim it needs ({@code exp}, the principal's claim), or with one of the wrong type or value. */
  BAD_CLAIMS(true),
  /**
   * A JWT not seen before, while more new ones arrive than the node checks signatures of in a
   * second ({@link RateBudget}): the caller may send it again shortly. Not remembered.
   */
  BUSY(false);

  private final boolean permanent;

  AuthProblem(boolean permanent) {
    this.permanent = permanent;
  }

  /**
   * Whether a JWT refused for this reason will be refused again for it, whatever the time: such
   * refusals are remembered, so the same forged token sent again costs a lookup. {@link #EXPIRED}
   * counts as permanent (the clock moves on); {@link #NOT_YET_VALID} does not.
   */
  boolean permanent() {
    return permanent;
  }
}
