package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tabula.security} as an operator writes it: the smallest form, and each bad setting named by its key. */
class AuthSettingsTest {
  private static KeyPair rsa;

  @TempDir
  Path dir;

  @BeforeAll
  static void keys() {
    rsa = JwtFixtures.rsa();
  }

  private AuthSettings read(String hocon) {
    return AuthSettings.from(ConfigFactory.parseString("tabula.security { " + hocon + " }")
        .getConfig("tabula.security"), dir);
  }

  /** The settings are refused with a message that starts with {@code key}; returns the message. */
  private String refused(String key, String hocon) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> read(hocon));
    assertTrue(e.getMessage().startsWith(key), e.getMessage());
    return e.getMessage();
  }

  private String issuerWith(String keySetting) {
    return "jwt.issuers = [ { issuer = \"https://idp.example.com\", audiences = [tabula], " + keySetting + " } ]";
  }

  @Test
  void theSmallestFormWorksAndOtherReadersKeysAreLeftAlone() {
    AuthSettings s = read("tokens = [ { principal = \"user:ana@example.com\", token = \"s3cret\" } ],"
        + " admins = [\"user:ana@example.com\"], bindings = [ { role = \"roles/bigtable.reader\" } ]");
    assertEquals(1, s.tokenDigests().size());
    assertFalse(s.tokenDigests().containsKey("s3cret"), "tokens are held as digests");
    assertEquals(new Principal("user:ana@example.com"), s.tokenDigests().get(TokenDigest.of("s3cret")));
    assertEquals(Duration.ofSeconds(60), s.clockSkew());
    assertEquals(10_000, s.cacheMaxEntries());
    assertEquals(List.of("https://bigtable.googleapis.com/", "https://bigtableadmin.googleapis.com/"),
        s.serviceAccountAudiences());
    assertTrue(s.serviceAccountScopes().contains("https://www.googleapis.com/auth/bigtable.data"));
    assertEquals(Duration.ofSeconds(5), read("clock-skew = 5s, cache.max-entries = 7").clockSkew());
  }

  @Test
  void aTokenGivenTwiceIsRefusedWithoutQuotingIt() {
    String message = refused("tabula.security.tokens[2].token", "tokens = ["
        + " { principal = \"user:ana@example.com\", token = \"same-token-1234\" },"
        + " { principal = \"user:bo@example.com\", token = \"another-token\" },"
        + " { principal = \"user:cy@example.com\", token = \"same-token-1234\" } ]");
    assertTrue(message.contains("tokens[0]"), message);
    assertFalse(message.contains("same-token-1234"), message);
  }

  @Test
  void aBadTokenEntryIsNamed() {
    refused("tabula.security.tokens[0].principal", "tokens = [ { principal = \"ana\", token = \"t\" } ]");
    refused("tabula.security.tokens[0].token", "tokens = [ { principal = \"user:ana@example.com\" } ]");
    refused("tabula.security.tokens[0].token",
        "tokens = [ { principal = \"user:ana@example.com\", token = \"a b\" } ]");
    refused("tabula.security.tokens[0].principal", "tokens = [ { token = \"t\" } ]");
  }

  @Test
  void aMissingOrBadServiceAccountFileIsNamed() {
    String message = refused("tabula.security.service-accounts[0]", "service-accounts = [\"nowhere.json\"]");
    assertTrue(message.contains(dir.resolve("nowhere.json").toString()), message);
    JwtFixtures.write(dir.resolve("bad.json"), "{\"type\": \"service_account\", \"client_email\": \"x@p.iam\"}");
    assertTrue(refused("tabula.security.service-accounts[0]", "service-accounts = [\"bad.json\"]")
        .contains("private_key_id"));
    JwtFixtures.write(dir.resolve("user.json"), "{\"type\": \"authorized_user\"}");
    refused("tabula.security.service-accounts[0]", "service-accounts = [\"user.json\"]");
    refused("tabula.security.service-accounts[0]", "service-accounts = [ { client-email = \"x@p.iam\" } ]");
    refused("tabula.security.service-accounts[0]", "service-accounts = [ 42 ]");
  }

  @Test
  void aBadPemIsNamed() {
    JwtFixtures.write(dir.resolve("garbage.pem"), "not a key at all");
    refused("tabula.security.jwt.issuers[0].public-key-pem", issuerWith("public-key-pem = garbage.pem"));
    JwtFixtures.write(dir.resolve("broken.pem"), "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n");
    refused("tabula.security.jwt.issuers[0].public-key-pem", issuerWith("public-key-pem = broken.pem"));
    JwtFixtures.write(dir.resolve("pkcs1.pem"), "-----BEGIN RSA PUBLIC KEY-----\nAAAA\n-----END RSA PUBLIC KEY-----\n");
    assertTrue(refused("tabula.security.jwt.issuers[0].public-key-pem", issuerWith("public-key-pem = pkcs1.pem"))
        .contains("PKCS#1"));
    JwtFixtures.write(dir.resolve("short.pem"),
        JwtFixtures.pem("PUBLIC KEY", JwtFixtures.generate("RSA", 1024).getPublic().getEncoded()));
    assertTrue(refused("tabula.security.jwt.issuers[0].public-key-pem", issuerWith("public-key-pem = short.pem"))
        .contains("2048"));
    refused("tabula.security.jwt.issuers[0].public-key-pem", issuerWith("public-key-pem = missing.pem"));
  }

  @Test
  void aBadIssuerIsNamed() {
    JwtFixtures.write(dir.resolve("k.pem"), JwtFixtures.pem("PUBLIC KEY", rsa.getPublic().getEncoded()));
    refused("tabula.security.jwt.issuers[0]", issuerWith("public-key-pem = k.pem, keys = jwks.json"));
    refused("tabula.security.jwt.issuers[0]", issuerWith(""));
    refused("tabula.security.jwt.issuers[0].audiences",
        "jwt.issuers = [ { issuer = \"https://idp.example.com\", public-key-pem = k.pem } ]");
    refused("tabula.security.jwt.issuers[0].issuer", "jwt.issuers = [ { audiences = [a], public-key-pem = k.pem } ]");
    refused("tabula.security.jwt.issuers[1].issuer", "jwt.issuers = [ "
        + "{ issuer = i, audiences = [a], public-key-pem = k.pem },"
        + " { issuer = i, audiences = [a], public-key-pem = k.pem } ]");
    refused("tabula.security.jwt.issuers[0].principal-prefix",
        issuerWith("public-key-pem = k.pem, principal-prefix = \"user\""));
  }

  @Test
  void aJwkSetWithASharedSecretOrUnnamedKeysIsRefused() {
    RSAKey public1 = new RSAKey.Builder((RSAPublicKey) rsa.getPublic()).build();
    JwtFixtures.write(dir.resolve("two.json"), new JWKSet(List.of(public1, public1)).toString());
    assertTrue(refused("tabula.security.jwt.issuers[0].keys", issuerWith("keys = two.json")).contains("kid"));
    OctetSequenceKey secret = new OctetSequenceKey.Builder(new byte[32]).keyID("hmac").build();
    JwtFixtures.write(dir.resolve("secret.json"), new JWKSet(secret).toString(false));
    refused("tabula.security.jwt.issuers[0].keys", issuerWith("keys = secret.json"));
    JwtFixtures.write(dir.resolve("empty.json"), "{\"keys\": []}");
    refused("tabula.security.jwt.issuers[0].keys", issuerWith("keys = empty.json"));
  }

  @Test
  void badTimesAndSizesAreNamed() {
    refused("tabula.security.clock-skew", "clock-skew = -1s");
    refused("tabula.security.clock-skew", "clock-skew = 2h");
    refused("tabula.security.cache.max-entries", "cache.max-entries = -1");
    refused("tabula.security", "tokens = \"s3cret\"");
  }
}
