package io.tabula.cluster.security;

import com.nimbusds.jose.Header;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.PlainHeader;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * Checks a JWS-signed JWT (compact form) against the configured signers, in this order, the
 * first failure deciding the refusal:
 *
 * <ol>
 *   <li>the header parses; {@code alg: none} is {@link AuthProblem#UNSIGNED}, an encrypted JWT
 *       or a {@code crit} header {@link AuthProblem#MALFORMED}, an algorithm outside
 *       {@link SigningKey#ACCEPTED} (HMAC among them) {@link AuthProblem#UNSUPPORTED_ALGORITHM};
 *   <li>the claims parse; their {@code iss} names a signer ({@link AuthProblem#UNKNOWN_ISSUER});
 *   <li>the header's {@code kid} names one of its keys ({@link AuthProblem#UNKNOWN_KEY}), of a
 *       type that fits {@code alg} ({@link AuthProblem#ALGORITHM_MISMATCH});
 *   <li>the signature verifies with that key ({@link AuthProblem#BAD_SIGNATURE}); keys a token
 *       carries itself ({@code jwk}, {@code jku}, {@code x5c}, {@code x5u}) are never used;
 *   <li>times, audience and principal: {@link Signer#check}.
 * </ol>
 *
 * <p>Claims are read before the signature is checked only to find the key; nothing in them is
 * believed until it has verified. A refusal's reason is fixed text or settings, never text from
 * the token. Thread-safe: immutable but for a counter of signature checks.
 */
final class JwtVerifier {
  /** What a token is worth. */
  sealed interface Outcome permits Valid, Invalid {}

  /** Made by {@code principal}, good while the clock is before {@code goodUntil}. */
  record Valid(Principal principal, Instant goodUntil) implements Outcome {}

  record Invalid(Authentication.Refused refused) implements Outcome, Reading {}

  /** A token read far enough to find its signer, or why it was not. */
  private sealed interface Reading permits Parsed, Invalid {}

  private record Parsed(SignedJWT jwt, JWTClaimsSet claims) implements Reading {}

  private final Map<String, Signer> signers;
  private final Duration skew;
  private final LongAdder signatureChecks = new LongAdder();

  private JwtVerifier(Map<String, Signer> signers, Duration skew) {
    this.signers = Map.copyOf(signers);
    this.skew = skew;
  }

  static JwtVerifier create(AuthSettings settings) {
    Map<String, Signer> signers = new HashMap<>();
    for (JwtIssuer issuer : settings.issuers()) {
      signers.put(issuer.issuer(), Signer.issuer(issuer));
    }
    Map<String, List<ServiceAccountKey>> accounts = settings.serviceAccounts().stream()
        .collect(Collectors.groupingBy(ServiceAccountKey::clientEmail));
    accounts.forEach((email, keys) -> signers.put(email,
        Signer.serviceAccount(keys, settings.serviceAccountAudiences(), settings.serviceAccountScopes())));
    return new JwtVerifier(signers, settings.clockSkew());
  }

  /** The outcome for {@code token} at {@code now}; never throws. */
  Outcome verify(String token, Instant now) {
    Reading reading;
    try {
      reading = parse(token);
    } catch (ParseException e) {
      return refused(AuthProblem.MALFORMED, "not a JWT: its header or claims do not parse");
    } catch (RuntimeException e) {
      // Nimbus's parsers answer some malformed input with an unchecked exception (in 10.10 a
      // header that is JSON null is a NullPointerException). Only parsing is inside this try.
      return refused(AuthProblem.MALFORMED, "not a JWT: its header or claims do not parse");
    }
    if (reading instanceof Invalid invalid) {
      return invalid;
    }
    Parsed parsed = (Parsed) reading;
    JWTClaimsSet claims = parsed.claims();
    Signer signer = claims.getIssuer() == null ? null : signers.get(claims.getIssuer());
    if (signer == null) {
      return refused(AuthProblem.UNKNOWN_ISSUER, "the JWT's issuer (iss) is neither a configured issuer nor a"
          + " configured service account");
    }
    return verifySignature(parsed.jwt(), signer).orElseGet(() -> signer.check(claims, now, skew));
  }

  private static Reading parse(String token) throws ParseException {
    int dot = token.indexOf('.');
    if (dot <= 0) {
      return refused(AuthProblem.MALFORMED, "not a JWT: no header");
    }
    Header header = Header.parse(new Base64URL(token.substring(0, dot)));
    if (header instanceof PlainHeader) {
      return refused(AuthProblem.UNSIGNED, "an unsigned JWT (alg none) is never accepted");
    }
    if (!(header instanceof JWSHeader jws)) {
      return refused(AuthProblem.MALFORMED,
          "an encrypted JWT (JWE) is not accepted; send a signed one");
    }
    if (JWSAlgorithm.Family.HMAC_SHA.contains(jws.getAlgorithm())) {
      return refused(AuthProblem.UNSUPPORTED_ALGORITHM,
          "HMAC-signed JWTs (HS256, HS384, HS512) are not accepted; no shared secret is configured");
    }
    if (!SigningKey.ACCEPTED.contains(jws.getAlgorithm())) {
      return refused(AuthProblem.UNSUPPORTED_ALGORITHM, "the JWT's signing algorithm is not"
          + " accepted; RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 and ES512 are");
    }
    if (jws.getCriticalParams() != null && !jws.getCriticalParams().isEmpty()) {
      return refused(AuthProblem.MALFORMED, "JWTs with critical header parameters (crit) are not accepted");
    }
    SignedJWT jwt = SignedJWT.parse(token);
    return new Parsed(jwt, jwt.getJWTClaimsSet());
  }

  /** Empty when the signature verifies with one of the signer's keys the header names. */
  private Optional<Outcome> verifySignature(SignedJWT jwt, Signer signer) {
    JWSHeader header = jwt.getHeader();
    List<SigningKey> named = signer.keys().stream().filter(k -> k.named(header.getKeyID())).toList();
    if (named.isEmpty()) {
      return Optional.of(refused(AuthProblem.UNKNOWN_KEY,
          "the JWT's key id (kid) names none of its issuer's keys"));
    }
    List<SigningKey> fitting = named.stream().filter(k -> k.fits(header.getAlgorithm())).toList();
    if (fitting.isEmpty()) {
      return Optional.of(refused(AuthProblem.ALGORITHM_MISMATCH,
          "the JWT's signing algorithm does not fit the type of its issuer's key"));
    }
    for (SigningKey key : fitting) {
      signatureChecks.increment();
      try {
        if (jwt.verify(key.verifier())) {
          return Optional.empty();
        }
      } catch (JOSEException e) {
        // a signature the key cannot even read (wrong length...): not verified by it
      }
    }
    return Optional.of(refused(AuthProblem.BAD_SIGNATURE,
        "the JWT's signature does not verify with its issuer's key"));
  }

  /** How many signatures were checked so far: a verification costs one per key tried. */
  long signatureChecks() {
    return signatureChecks.sum();
  }

  private static Invalid refused(AuthProblem problem, String reason) {
    return new Invalid(new Authentication.Refused(problem, reason));
  }
}
