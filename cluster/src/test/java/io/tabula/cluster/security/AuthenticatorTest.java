package io.tabula.cluster.security;

import static io.tabula.cluster.security.JwtFixtures.assertRefused;
import static io.tabula.cluster.security.JwtFixtures.claims;
import static io.tabula.cluster.security.JwtFixtures.sign;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One call's authentication, end to end from the header: static tokens, the header's own
 * refusals, issuer JWTs and every way one is refused, and the cache of answers. Real keys made
 * here, a clock the test moves; every refusal is checked for its problem and for not quoting the
 * token.
 */
class AuthenticatorTest {
  private static final String IDP = "https://idp.example.com";
  private static final Instant T = Instant.parse("2026-03-01T12:00:00Z");
  private static KeyPair rsa;
  private static KeyPair ec;
  private static KeyPair stranger;

  @TempDir
  Path dir;
  private ManualClock clock;
  private Authenticator auth;

  @BeforeAll
  static void keys() {
    rsa = JwtFixtures.rsa();
    ec = JwtFixtures.ec256();
    stranger = JwtFixtures.rsa();
  }

  @BeforeEach
  void authenticator() {
    JWKSet jwks = new JWKSet(List.of(new RSAKey.Builder((RSAPublicKey) rsa.getPublic()).keyID("k1").build(),
        new ECKey.Builder(Curve.P_256, (ECPublicKey) ec.getPublic()).keyID("k2").build()));
    JwtFixtures.write(dir.resolve("jwks.json"), jwks.toString());
    JwtFixtures.write(dir.resolve("issuer.pem"), JwtFixtures.pem("PUBLIC KEY", rsa.getPublic().getEncoded()));
    String hocon = """
        tabula.security {
          tokens = [ { principal = "user:ana@example.com", token = "s3cret" } ]
          admins = ["user:ana@example.com"]
          jwt.issuers = [
            { issuer = "https://idp.example.com", audiences = ["tabula"], keys = "jwks.json",
              principal-claim = "email", principal-prefix = "user:" }
            { issuer = "https://pem.example.com", audiences = ["tabula", "other"], public-key-pem = "issuer.pem" }
          ]
        }""";
    clock = new ManualClock(T);
    auth = Authenticator.from(AuthSettings.from(ConfigFactory.parseString(hocon).getConfig("tabula.security"), dir),
        clock);
  }

  private Authentication bearer(String token) {
    return auth.authenticate("Bearer " + token);
  }

  private static JWTClaimsSet.Builder idpClaims(Instant now) {
    return claims(IDP, "tabula", now).claim("email", "bo@example.com");
  }

  private static String rs256(JWTClaimsSet.Builder claims) {
    return sign(JWSAlgorithm.RS256, "k1", claims.build(), rsa.getPrivate());
  }

  private void assertPrincipal(String member, Authentication outcome) {
    assertEquals(new Authentication.Authenticated(new Principal(member)), outcome);
  }

  @Test
  void aStaticTokenNamesItsPrincipalAndAnUnknownOneIsRefused() {
    assertPrincipal("user:ana@example.com", bearer("s3cret"));
    assertPrincipal("user:ana@example.com", auth.authenticate("bearer   s3cret  "));
    assertRefused(AuthProblem.UNKNOWN_TOKEN, bearer("wrong-token-123"), "wrong-token-123");
    assertRefused(AuthProblem.UNKNOWN_TOKEN, bearer("s3cret2"), "s3cret2");
  }

  @Test
  void aHeaderThatIsNotBearerIsRefusedForWhatItIs() {
    assertRefused(AuthProblem.MISSING, auth.authenticate(null), "");
    assertRefused(AuthProblem.MALFORMED, auth.authenticate("Basic YW5hOnMzY3JldA=="), "YW5hOnMzY3JldA==");
    assertRefused(AuthProblem.MALFORMED, auth.authenticate("Bearer "), "");
    assertRefused(AuthProblem.MALFORMED, auth.authenticate("Bearer"), "");
    assertRefused(AuthProblem.MALFORMED, auth.authenticate("Bearers3cret"), "s3cret");
    assertRefused(AuthProblem.MALFORMED, bearer("!!garbage!! {}"), "!!garbage!! {}");
    assertRefused(AuthProblem.MALFORMED, bearer("not.a.jwt"), "not.a.jwt");
    assertRefused(AuthProblem.MALFORMED, bearer("eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln"), "bm90IGpzb24");
    String nullHeader = Base64URL.encode("null") + "." + Base64URL.encode("{}") + ".c2lnbmF0dXJl";
    assertRefused(AuthProblem.MALFORMED, bearer(nullHeader), nullHeader);
  }

  @Test
  void aHeaderOverEightKibIsRefusedBeforeItIsRead() {
    String huge = "a".repeat(100 * 1024);
    assertRefused(AuthProblem.TOO_LARGE, bearer(huge), huge);
    assertRefused(AuthProblem.TOO_LARGE, auth.authenticate("Basic " + huge), huge);
    String longest = "b".repeat(Authenticator.MAX_HEADER_CHARS - "Bearer ".length());
    assertRefused(AuthProblem.UNKNOWN_TOKEN, bearer(longest), longest);
    assertRefused(AuthProblem.TOO_LARGE, bearer(longest + "b"), longest);
  }

  @Test
  void aValidIssuerTokenNamesTheConfiguredClaim() {
    assertPrincipal("user:bo@example.com", bearer(rs256(idpClaims(T))));
    String es256 = sign(JWSAlgorithm.ES256, "k2", idpClaims(T).build(), ec.getPrivate());
    assertPrincipal("user:bo@example.com", bearer(es256));
    String pemIssuer = sign(JWSAlgorithm.PS256, null,
        claims("https://pem.example.com", "other", T).build(), rsa.getPrivate());
    assertPrincipal("user:subject-1", bearer(pemIssuer));
  }

  @Test
  void unsignedAndHmacTokensAreRefused() throws JOSEException {
    String none = new PlainJWT(idpClaims(T).build()).serialize();
    assertRefused(AuthProblem.UNSIGNED, bearer(none), none);
    String rs = rs256(idpClaims(T));
    String noneWithSignature = Base64URL.encode("{\"alg\":\"none\"}") + rs.substring(rs.indexOf('.'));
    assertRefused(AuthProblem.UNSIGNED, bearer(noneWithSignature), noneWithSignature);

    SignedJWT hs = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("k1").build(), idpClaims(T).build());
    hs.sign(new MACSigner(rsa.getPublic().getEncoded()));
    assertRefused(AuthProblem.UNSUPPORTED_ALGORITHM, bearer(hs.serialize()), hs.serialize());
  }

  @Test
  void aTokenSignedByAnotherKeyOrWithAnAlgorithmForAnotherKeyTypeIsRefused() {
    String forged = sign(JWSAlgorithm.RS256, "k1", idpClaims(T).build(), stranger.getPrivate());
    assertRefused(AuthProblem.BAD_SIGNATURE, bearer(forged), forged);
    String ecOnRsaKey = sign(JWSAlgorithm.ES256, "k1", idpClaims(T).build(), ec.getPrivate());
    assertRefused(AuthProblem.ALGORITHM_MISMATCH, bearer(ecOnRsaKey), ecOnRsaKey);
    String rsaOnEcKey = sign(JWSAlgorithm.RS256, "k2", idpClaims(T).build(), rsa.getPrivate());
    assertRefused(AuthProblem.ALGORITHM_MISMATCH, bearer(rsaOnEcKey), rsaOnEcKey);
  }

  @Test
  void expiryIsJudgedByTheClockWithTheSkew() {
    String pastSkew = rs256(idpClaims(T.minusSeconds(7200)).expirationTime(Date.from(T.minusSeconds(61))));
    assertRefused(AuthProblem.EXPIRED, bearer(pastSkew), pastSkew);
    String withinSkew = rs256(idpClaims(T.minusSeconds(7200)).expirationTime(Date.from(T.minusSeconds(30))));
    assertPrincipal("user:bo@example.com", bearer(withinSkew));
    String noExpiry = rs256(idpClaims(T).expirationTime(null));
    assertRefused(AuthProblem.BAD_CLAIMS, bearer(noExpiry), noExpiry);
  }

  @Test
  void aTokenNotValidYetIsRefused() {
    String notBefore = rs256(idpClaims(T).notBeforeTime(Date.from(T.plusSeconds(120))));
    assertRefused(AuthProblem.NOT_YET_VALID, bearer(notBefore), notBefore);
    String issuedLater = rs256(idpClaims(T.plusSeconds(600)));
    assertRefused(AuthProblem.NOT_YET_VALID, bearer(issuedLater), issuedLater);
    assertPrincipal("user:bo@example.com", bearer(rs256(idpClaims(T).notBeforeTime(Date.from(T.plusSeconds(30))))));
    clock.advance(Duration.ofSeconds(121 - 60));
    assertPrincipal("user:bo@example.com", bearer(notBefore));
  }

  @Test
  void aTokenForAnotherAudienceIssuerOrKeyIsRefused() {
    String audience = rs256(idpClaims(T).audience("someone-else"));
    assertRefused(AuthProblem.WRONG_AUDIENCE, bearer(audience), audience);
    String noAudience = rs256(idpClaims(T).audience((String) null));
    assertRefused(AuthProblem.WRONG_AUDIENCE, bearer(noAudience), noAudience);
    String issuer = rs256(idpClaims(T).issuer("https://evil.example.com"));
    assertRefused(AuthProblem.UNKNOWN_ISSUER, bearer(issuer), issuer);
    String kid = sign(JWSAlgorithm.RS256, "k3", idpClaims(T).build(), rsa.getPrivate());
    assertRefused(AuthProblem.UNKNOWN_KEY, bearer(kid), kid);
    String noEmail = rs256(idpClaims(T).claim("email", null));
    assertRefused(AuthProblem.BAD_CLAIMS, bearer(noEmail), noEmail);
    String notAString = rs256(idpClaims(T).claim("email", List.of("bo@example.com")));
    assertRefused(AuthProblem.BAD_CLAIMS, bearer(notAString), notAString);
  }

  @Test
  void aTokenSeenBeforeIsNotVerifiedAgain() {
    String token = rs256(idpClaims(T));
    assertPrincipal("user:bo@example.com", bearer(token));
    assertEquals(1, auth.signatureChecks());
    for (int i = 0; i < 100; i++) {
      assertPrincipal("user:bo@example.com", bearer(token));
    }
    assertEquals(1, auth.signatureChecks(), "answered from the cache");

    String forged = sign(JWSAlgorithm.RS256, "k1", idpClaims(T).build(), stranger.getPrivate());
    for (int i = 0; i < 100; i++) {
      assertRefused(AuthProblem.BAD_SIGNATURE, bearer(forged), forged);
    }
    assertEquals(2, auth.signatureChecks(), "a forged token is checked once, its refusal remembered");
  }

  @Test
  void aCachedTokenStopsWorkingWhenTheClockPassesItsExpiry() {
    String token = rs256(idpClaims(T).expirationTime(Date.from(T.plusSeconds(600))));
    assertPrincipal("user:bo@example.com", bearer(token));
    clock.advance(Duration.ofSeconds(600 + 59));
    assertPrincipal("user:bo@example.com", bearer(token));
    assertEquals(1, auth.signatureChecks());
    clock.advance(Duration.ofSeconds(1));
    assertRefused(AuthProblem.EXPIRED, bearer(token), token);
    assertRefused(AuthProblem.EXPIRED, bearer(token), token);
  }

  @Test
  void callsFromManyThreadsAtOnceEachGetTheirOwnAnswer() throws InterruptedException, ExecutionException {
    List<String> tokens = List.of(rs256(idpClaims(T)), rs256(idpClaims(T).claim("email", "cy@example.com")),
        sign(JWSAlgorithm.RS256, "k1", idpClaims(T).build(), stranger.getPrivate()), "s3cret", "unknown-token");
    List<Authentication> expected = List.of(new Authentication.Authenticated(new Principal("user:bo@example.com")),
        new Authentication.Authenticated(new Principal("user:cy@example.com")), bearer(tokens.get(2)),
        new Authentication.Authenticated(new Principal("user:ana@example.com")), bearer(tokens.get(4)));
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> calls = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int first = t;
        calls.add(threads.submit(() -> {
          for (int i = 0; i < 1000; i++) {
            int which = (first + i) % tokens.size();
            assertEquals(expected.get(which), bearer(tokens.get(which)));
          }
        }));
      }
      for (Future<?> call : calls) {
        call.get();
      }
    } finally {
      threads.shutdownNow();
    }
    assertTrue(auth.signatureChecks() <= 3 * 4, "each JWT checked at most once per thread: " + auth.signatureChecks());
  }
}
