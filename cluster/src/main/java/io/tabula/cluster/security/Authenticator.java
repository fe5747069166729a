package io.tabula.cluster.security;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;

/**
 * Authenticates one call from its {@code authorization} header: {@code Bearer <token>}, where
 * the token is one of the configured static tokens or a JWT signed by a configured issuer or
 * Google service account ({@link AuthSettings}). A call costs:
 *
 * <ol>
 *   <li>a header over {@link #MAX_HEADER_CHARS} characters: a length check ({@link AuthProblem#TOO_LARGE});
 *   <li>a JWT accepted before and still good: one cache lookup by the token;
 *   <li>a static token: one SHA-256 digest and a map lookup (tokens are held only as digests);
 *   <li>a JWT refused before for a reason that will not change: the digest and a lookup;
 *   <li>any other JWT: parsing and one signature check ({@link JwtVerifier}), its answer then cached;
 *       at most {@value #SIGNATURES_PER_SECOND} such checks a second ({@link AuthProblem#BUSY} beyond), so that
 *       forged tokens, each new, cannot take the node's CPU.
 * </ol>
 *
 * <p>Every time decision reads the injected clock. {@link #authenticate} never throws and its
 * refusals never quote the token. Thread-safe: called at once from any number of threads; the
 * settings are immutable and the caches are Caffeine's ({@link TokenCache}).
 */
public final class Authenticator {
  /** The longest {@code authorization} header looked at, 8 KiB. */
  public static final int MAX_HEADER_CHARS = 8192;

  private final Map<String, Principal> tokenDigests;
  private final JwtVerifier verifier;
  private final TokenCache cache;
  private final Clock clock;
  /** Signature checks of tokens not seen before: what a flood of forged ones may cost the node. */
  private final RateBudget budget = new RateBudget(SIGNATURES_PER_SECOND);
  /** How many signatures of new tokens are checked in a second at most (each costs 0.05 to 1 ms of CPU). */
  static final int SIGNATURES_PER_SECOND = 500;

  private Authenticator(Map<String, Principal> tokenDigests, JwtVerifier verifier, TokenCache cache, Clock clock) {
    this.tokenDigests = tokenDigests;
    this.verifier = verifier;
    this.cache = cache;
    this.clock = clock;
  }

  public static Authenticator from(AuthSettings settings, Clock clock) {
    return new Authenticator(settings.tokenDigests(), JwtVerifier.create(settings),
        new TokenCache(settings.cacheMaxEntries(), clock), clock);
  }

  /**
   * Who makes a call whose {@code authorization} header is {@code authorizationHeader} (null
   * when the call has none), or why not. Never throws.
   */
  public Authentication authenticate(String authorizationHeader) {
    BearerHeader.Read read = BearerHeader.read(authorizationHeader);
    if (read instanceof BearerHeader.Invalid invalid) {
      return invalid.refused();
    }
    String token = ((BearerHeader.Token) read).token();
    Instant now = clock.instant();
    TokenCache.Accepted known = cache.accepted(token);
    if (known != null) {
      if (now.isBefore(known.goodUntil())) {
        return known.authenticated();
      }
      cache.forget(token);
    }
    String digest = TokenDigest.of(token);
    Principal principal = tokenDigests.get(digest);
    if (principal != null) {
      return new Authentication.Authenticated(principal);
    }
    if (token.indexOf('.') < 0) {
      return new Authentication.Refused(AuthProblem.UNKNOWN_TOKEN, "the bearer token is not one configured here");
    }
    Authentication.Refused refusedBefore = cache.refused(digest);
    if (refusedBefore != null) {
      return refusedBefore;
    }
    if (!budget.take()) {
      return new Authentication.Refused(AuthProblem.BUSY, "more new tokens arrive than this node checks the"
          + " signatures of in a second: send it again shortly");
    }
    JwtVerifier.Outcome outcome = verifier.verify(token, now);
    if (outcome instanceof JwtVerifier.Valid valid) {
      Authentication.Authenticated answer = new Authentication.Authenticated(valid.principal());
      cache.accept(token, new TokenCache.Accepted(answer, valid.goodUntil()));
      return answer;
    }
    Authentication.Refused refusal = ((JwtVerifier.Invalid) outcome).refused();
    if (refusal.problem().permanent()) {
      cache.refuse(digest, refusal);
    }
    return refusal;
  }

  /** Signatures checked since this authenticator was made: a measure of what the cache saves. */
  long signatureChecks() {
    return verifier.signatureChecks();
  }
}
