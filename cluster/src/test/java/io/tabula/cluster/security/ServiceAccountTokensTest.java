package io.tabula.cluster.security;

import static io.tabula.cluster.security.JwtFixtures.assertRefused;
import static io.tabula.cluster.security.JwtFixtures.serviceAccountJwt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.auth.oauth2.ServiceAccountCredentials;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.text.ParseException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Google service accounts' self-signed JWTs, as the official Cloud Bigtable client's auth library
 * sends them: built here the way the library builds them, and made by the library itself
 * ({@code google-auth-library-oauth2-http}, on the test class path through google-cloud-bigtable).
 * The account's key file is the JSON the Cloud console gives, written with a key made here.
 */
class ServiceAccountTokensTest {
  private static final String EMAIL = "loader@tabula-test.iam.gserviceaccount.com";
  private static final String KEY_ID = "0123456789abcdef0123456789abcdef01234567";
  private static final String DATA_URI = "https://bigtable.googleapis.com/google.bigtable.v2.Bigtable";
  private static final String DATA_SCOPE = "https://www.googleapis.com/auth/bigtable.data";
  private static final Instant T = Instant.parse("2026-03-01T12:00:00Z");
  private static KeyPair account;
  private static KeyPair other;

  @TempDir
  Path dir;

  @BeforeAll
  static void keys() {
    account = JwtFixtures.rsa();
    other = JwtFixtures.rsa();
  }

  private Authenticator authenticator(String settings, Clock clock) {
    return Authenticator.from(AuthSettings.from(ConfigFactory.parseString(settings), dir), clock);
  }

  private Authenticator fromKeyFile(Clock clock) {
    JwtFixtures.serviceAccountFile(dir.resolve("loader.json"), EMAIL, KEY_ID, account);
    return authenticator("service-accounts = [\"loader.json\"]", clock);
  }

  private static void assertAccount(Authentication outcome) {
    assertEquals(new Authentication.Authenticated(new Principal("serviceAccount:" + EMAIL)), outcome);
  }

  @Test
  void aSelfSignedTokenWithABigtableAudienceNamesTheAccount() {
    Authenticator auth = fromKeyFile(new ManualClock(T));
    for (String aud : List.of("https://bigtable.googleapis.com/", "https://bigtableadmin.googleapis.com/")) {
      String token = serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, aud, null);
      assertAccount(auth.authenticate("Bearer " + token));
    }
    String pubsub = serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, "https://pubsub.googleapis.com/", null);
    assertRefused(AuthProblem.WRONG_AUDIENCE, auth.authenticate("Bearer " + pubsub), pubsub);
  }

  /**
   * grpc-java's call credentials, handed the key itself, self-sign with the service's URI on the
   * address the client dials (seen from the official client: {@code
   * https://127.0.0.1:PORT/google.bigtable.v2.Bigtable}); any other service's URI is refused.
   */
  @Test
  void aSelfSignedTokenForTheServiceAtAnyAddressNamesTheAccount() {
    Authenticator auth = fromKeyFile(new ManualClock(T));
    for (String aud : List.of("https://127.0.0.1:8086/google.bigtable.v2.Bigtable",
        "https://tabula.example.com/google.bigtable.admin.v2.BigtableTableAdmin")) {
      assertAccount(auth.authenticate("Bearer " + serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, aud, null)));
    }
    for (String aud : List.of("https://127.0.0.1:8086/google.pubsub.v1.Publisher", "http://h/google.bigtable.v2.Bigtable",
        "https:///google.bigtable.v2.Bigtable")) {
      String token = serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, aud, null);
      assertRefused(AuthProblem.WRONG_AUDIENCE, auth.authenticate("Bearer " + token), token);
    }
  }

  @Test
  void aSelfSignedTokenWithABigtableScopeAndNoAudienceNamesTheAccount() {
    Authenticator auth = fromKeyFile(new ManualClock(T));
    String scoped = serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, null,
        "https://www.googleapis.com/auth/cloud-platform.read-only " + DATA_SCOPE);
    assertAccount(auth.authenticate("Bearer " + scoped));
    String otherScope = serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, null,
        "https://www.googleapis.com/auth/pubsub");
    assertRefused(AuthProblem.WRONG_AUDIENCE, auth.authenticate("Bearer " + otherScope), otherScope);
    String scopeForAnotherAudience = serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T,
        "https://pubsub.googleapis.com/", DATA_SCOPE);
    assertRefused(AuthProblem.WRONG_AUDIENCE, auth.authenticate("Bearer " + scopeForAnotherAudience),
        scopeForAnotherAudience);
  }

  @Test
  void aTokenNotMadeWithTheAccountsKeyIsRefused() {
    Authenticator auth = fromKeyFile(new ManualClock(T));
    String aud = "https://bigtable.googleapis.com/";
    String forged = serviceAccountJwt(EMAIL, KEY_ID, other.getPrivate(), T, aud, null);
    assertRefused(AuthProblem.BAD_SIGNATURE, auth.authenticate("Bearer " + forged), forged);
    String rotated = serviceAccountJwt(EMAIL, "another-key-id", account.getPrivate(), T, aud, null);
    assertRefused(AuthProblem.UNKNOWN_KEY, auth.authenticate("Bearer " + rotated), rotated);
    String otherAccount = serviceAccountJwt("x@p.iam.gserviceaccount.com", KEY_ID, account.getPrivate(), T, aud, null);
    assertRefused(AuthProblem.UNKNOWN_ISSUER, auth.authenticate("Bearer " + otherAccount), otherAccount);
    String otherSubject = JwtFixtures.sign(JWSAlgorithm.RS256, KEY_ID,
        JwtFixtures.claims(EMAIL, aud, T).subject("user@example.com").build(), account.getPrivate());
    assertRefused(AuthProblem.BAD_CLAIMS, auth.authenticate("Bearer " + otherSubject), otherSubject);
  }

  @Test
  void anEntryWithOnlyThePublicKeyIsEnough() {
    JwtFixtures.write(dir.resolve("loader.pem"), JwtFixtures.pem("PUBLIC KEY", account.getPublic().getEncoded()));
    Authenticator auth = authenticator("service-accounts = [ { client-email = \"" + EMAIL + "\", key-id = \""
        + KEY_ID + "\", public-key-pem = loader.pem } ]", new ManualClock(T));
    assertAccount(auth.authenticate("Bearer "
        + serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, "https://bigtable.googleapis.com/", null)));
    assertAccount(auth.authenticate("Bearer " + serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, null,
        DATA_SCOPE)));
  }

  @Test
  void theAccountsPublishedCertificateIsEnough() throws IOException, InterruptedException, GeneralSecurityException {
    // Google publishes each key's certificate (.../service_accounts/v1/metadata/x509/<email>); keytool makes one here.
    Path store = dir.resolve("loader.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "loader", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + EMAIL,
        "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit")
        .redirectErrorStream(true).start();
    String output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, keytool.waitFor(), output);
    KeyStore keyStore = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      keyStore.load(in, "changeit".toCharArray());
    }
    PrivateKey key = (PrivateKey) keyStore.getKey("loader", "changeit".toCharArray());
    JwtFixtures.write(dir.resolve("loader.crt"), JwtFixtures.pem("CERTIFICATE",
        keyStore.getCertificate("loader").getEncoded()));
    Authenticator auth = authenticator("service-accounts = [ { client-email = \"" + EMAIL + "\", key-id = \""
        + KEY_ID + "\", public-key-pem = loader.crt } ]", new ManualClock(T));
    assertAccount(auth.authenticate("Bearer " + serviceAccountJwt(EMAIL, KEY_ID, key, T, null, DATA_SCOPE)));
    String forged = serviceAccountJwt(EMAIL, KEY_ID, account.getPrivate(), T, null, DATA_SCOPE);
    assertRefused(AuthProblem.BAD_SIGNATURE, auth.authenticate("Bearer " + forged), forged);
  }

  @Test
  void googlesLibrarySelfSignsWithTheUrisAudienceWhenItHasNoScopes() throws IOException, ParseException {
    Path keyFile = JwtFixtures.serviceAccountFile(dir.resolve("loader.json"), EMAIL, KEY_ID, account);
    ServiceAccountCredentials credentials;
    try (InputStream in = Files.newInputStream(keyFile)) {
      credentials = ServiceAccountCredentials.fromStream(in);
    }
    String token = bearerOf(credentials.getRequestMetadata(URI.create(DATA_URI)));
    JWTClaimsSet claims = selfSigned(token);
    assertEquals(List.of("https://bigtable.googleapis.com/"), claims.getAudience());
    assertNull(claims.getClaim("scope"));
    assertAccount(fromKeyFile(Clock.systemUTC()).authenticate("Bearer " + token));

    // Pointed at a node of its own, the client's audience is that node's host (port dropped).
    String own = bearerOf(credentials.getRequestMetadata(URI.create(
        "https://tabula.example.com:8086/google.bigtable.v2.Bigtable")));
    assertEquals(List.of("https://tabula.example.com/"), SignedJWT.parse(own).getJWTClaimsSet().getAudience());
    assertRefused(AuthProblem.WRONG_AUDIENCE, fromKeyFile(Clock.systemUTC()).authenticate("Bearer " + own), own);
    Authenticator withOwnAudience = authenticator("service-accounts = [\"loader.json\"], jwt.audiences = "
        + "[\"https://tabula.example.com/\"]", Clock.systemUTC());
    assertAccount(withOwnAudience.authenticate("Bearer " + own));
  }

  @Test
  void googlesLibrarySelfSignsWithAScopeWhenToldToUseJwtAccessWithScope() throws IOException, ParseException {
    Path keyFile = JwtFixtures.serviceAccountFile(dir.resolve("loader.json"), EMAIL, KEY_ID, account);
    ServiceAccountCredentials credentials;
    try (InputStream in = Files.newInputStream(keyFile)) {
      credentials = ((ServiceAccountCredentials) ServiceAccountCredentials.fromStream(in)
          .createScoped(List.of(DATA_SCOPE, "https://www.googleapis.com/auth/cloud-platform")))
          .createWithUseJwtAccessWithScope(true);
    }
    String token = bearerOf(credentials.getRequestMetadata(URI.create(DATA_URI)));
    JWTClaimsSet claims = selfSigned(token);
    assertEquals(List.of(), claims.getAudience());
    assertEquals(DATA_SCOPE + " https://www.googleapis.com/auth/cloud-platform", claims.getStringClaim("scope"));
    assertAccount(fromKeyFile(Clock.systemUTC()).authenticate("Bearer " + token));
  }

  /** The claims of a JWT made as the library makes every self-signed one (aud and scope aside). */
  private static JWTClaimsSet selfSigned(String token) throws ParseException {
    SignedJWT jwt = SignedJWT.parse(token);
    assertEquals(JWSAlgorithm.RS256, jwt.getHeader().getAlgorithm());
    assertEquals(JOSEObjectType.JWT, jwt.getHeader().getType());
    assertEquals(KEY_ID, jwt.getHeader().getKeyID());
    JWTClaimsSet claims = jwt.getJWTClaimsSet();
    assertEquals(EMAIL, claims.getIssuer());
    assertEquals(EMAIL, claims.getSubject());
    assertEquals(3600, claims.getExpirationTime().getTime() / 1000 - claims.getIssueTime().getTime() / 1000);
    return claims;
  }

  private static String bearerOf(Map<String, List<String>> metadata) {
    List<String> values = metadata.get("Authorization");
    assertEquals(1, values.size(), metadata.keySet().toString());
    assertTrue(values.get(0).startsWith("Bearer "), "a bearer token");
    return values.get(0).substring("Bearer ".length());
  }
}
