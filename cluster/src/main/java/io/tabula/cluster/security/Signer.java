package io.tabula.cluster.security;

import com.nimbusds.jwt.JWTClaimsSet;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Someone whose JWTs are accepted, found by the token's {@code iss}: a configured
 * {@link JwtIssuer}, or a Google service account (its email is the {@code iss} of its self-signed
 * tokens). Holds the signer's keys and checks a verified token's claims: its times against the
 * clock with {@code skew} allowed either way, its audience, and who it names.
 *
 * <p>A service account's token is for us when its {@code aud} is an accepted audience or, when
 * it has no {@code aud} ("JWT access with scope"), when its space-separated {@code scope} holds
 * an accepted scope, or when its {@code aud} names one of the node's services as gRPC's call
 * credentials do ({@link #isServiceUri}). An issuer's token must have an accepted {@code aud}. Immutable and
 * thread-safe.
 */
final class Signer {
  /** Who a verified token is made by. */
  private sealed interface Identity permits FromClaim, ServiceAccount {}

  /** The issuer's string claim {@code claim}, after {@code prefix}. */
  private record FromClaim(String claim, String prefix) implements Identity {}

  /** The account itself; the token's {@code sub}, when it has one, must be its {@code iss}. */
  private record ServiceAccount(Principal principal) implements Identity {}

  private final List<SigningKey> keys;
  private final Set<String> audiences;
  private final Set<String> scopes;
  private final Identity identity;

  private Signer(List<SigningKey> keys, Set<String> audiences, Set<String> scopes, Identity identity) {
    this.keys = List.copyOf(keys);
    this.audiences = Set.copyOf(audiences);
    this.scopes = Set.copyOf(scopes);
    this.identity = identity;
  }

  static Signer issuer(JwtIssuer issuer) {
    return new Signer(issuer.keys().stream().map(SigningKey::of).toList(), Set.copyOf(issuer.audiences()), Set.of(),
        new FromClaim(issuer.principalClaim(), issuer.principalPrefix()));
  }

  /** One service account, with all its configured keys; {@code keys} are all of the same account. */
  static Signer serviceAccount(List<ServiceAccountKey> keys, List<String> audiences, List<String> scopes) {
    return new Signer(keys.stream().map(k -> SigningKey.of(k.verificationKey())).toList(), Set.copyOf(audiences),
        Set.copyOf(scopes), new ServiceAccount(keys.get(0).principal()));
  }

  List<SigningKey> keys() {
    return keys;
  }

  /**
   * The caller a token with a verified signature is made by, and until when it is good (its
   * {@code exp} plus the skew), or why it is refused.
   */
  JwtVerifier.Outcome check(JWTClaimsSet claims, Instant now, Duration skew) {
    Date exp = claims.getExpirationTime();
    if (exp == null) {
      return refused(AuthProblem.BAD_CLAIMS, "the JWT has no expiry (exp); tokens that never expire are not accepted");
    }
    Instant goodUntil = exp.toInstant().plus(skew);
    if (!now.isBefore(goodUntil)) {
      return refused(AuthProblem.EXPIRED, "the JWT has expired (its exp is past, beyond the allowed clock skew)");
    }
    if (ahead(claims.getNotBeforeTime(), now, skew)) {
      return refused(AuthProblem.NOT_YET_VALID, "the JWT is not valid yet (its nbf is ahead of the clock)");
    }
    if (ahead(claims.getIssueTime(), now, skew)) {
      return refused(AuthProblem.NOT_YET_VALID, "the JWT was issued in the future (its iat is ahead of the clock)");
    }
    Optional<JwtVerifier.Outcome> notForUs = audience(claims);
    if (notForUs.isPresent()) {
      return notForUs.get();
    }
    if (identity instanceof FromClaim c) {
      return fromClaim(claims.getClaim(c.claim()), c, goodUntil);
    }
    ServiceAccount account = (ServiceAccount) identity;
    return claims.getSubject() == null || claims.getSubject().equals(claims.getIssuer())
        ? new JwtVerifier.Valid(account.principal(), goodUntil)
        : refused(AuthProblem.BAD_CLAIMS, "a service account's self-signed JWT must have sub equal to iss");
  }

  private static boolean ahead(Date time, Instant now, Duration skew) {
    return time != null && now.plus(skew).isBefore(time.toInstant());
  }

  /** Empty when the token is for us, else its refusal. */
  private Optional<JwtVerifier.Outcome> audience(JWTClaimsSet claims) {
    List<String> aud = claims.getAudience();
    if (aud.stream().anyMatch(a -> audiences.contains(a) || !scopes.isEmpty() && isServiceUri(a))) {
      return Optional.empty();
    }
    if (!aud.isEmpty() || scopes.isEmpty()) {
      return Optional.of(refused(AuthProblem.WRONG_AUDIENCE, "the JWT's audience (aud) is none of those accepted"
          + " here " + audiences));
    }
    if (!(claims.getClaim("scope") instanceof String scope)) {
      return Optional.of(refused(AuthProblem.WRONG_AUDIENCE, "the JWT has neither an audience (aud) nor a scope"
          + " accepted here; audiences " + audiences));
    }
    for (String s : scope.split(" ")) {
      if (scopes.contains(s)) {
        return Optional.empty();
      }
    }
    return Optional.of(refused(AuthProblem.WRONG_AUDIENCE, "the JWT's scope has no Bigtable scope accepted here"));
  }

  /**
   * Whether {@code aud} names one of the node's gRPC services as gRPC's call credentials do
   * ({@code https://<authority>/<service>}): the audience grpc-java gives a service account's
   * self-signed JWT when a client is handed the key itself, from the address the client
   * dials, which may be any of the node's names. A service account's token only.
   */
  static boolean isServiceUri(String aud) {
    if (!aud.startsWith("https://")) {
      return false;
    }
    int slash = aud.indexOf('/', "https://".length());
    return slash > "https://".length() && SERVICES.contains(aud.substring(slash + 1));
  }

  private static final Set<String> SERVICES = Set.of("google.bigtable.v2.Bigtable",
      "google.bigtable.admin.v2.BigtableTableAdmin", "google.bigtable.admin.v2.BigtableInstanceAdmin",
      "tabula.v1.Locations", "tabula.v1.LocalityGroups");

  private static JwtVerifier.Outcome fromClaim(Object value, FromClaim rule, Instant goodUntil) {
    if (value instanceof String s && !s.isEmpty() && Principal.isMember(rule.prefix() + s)) {
      return new JwtVerifier.Valid(new Principal(rule.prefix() + s), goodUntil);
    }
    return refused(AuthProblem.BAD_CLAIMS, "the JWT's " + rule.claim() + " claim is missing, not a string, or not"
        + " an IAM member once prefixed with '" + rule.prefix() + "'");
  }

  private static JwtVerifier.Outcome refused(AuthProblem problem, String reason) {
    return new JwtVerifier.Invalid(new Authentication.Refused(problem, reason));
  }
}
