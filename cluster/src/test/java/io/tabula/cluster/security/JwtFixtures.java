package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;

/** Keys, key files and signed tokens for the security tests, all made fresh. */
public final class JwtFixtures {
  private JwtFixtures() {}

  public static KeyPair rsa() {
    return generate("RSA", 2048);
  }

  static KeyPair ec256() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static KeyPair generate(String algorithm, int bits) {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
      g.initialize(bits);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Claims with iss, aud, sub, iat = now and exp = now + 1 hour. */
  static JWTClaimsSet.Builder claims(String issuer, String audience, Instant now) {
    return new JWTClaimsSet.Builder().issuer(issuer).audience(audience).subject("subject-1")
        .issueTime(Date.from(now)).expirationTime(Date.from(now.plusSeconds(3600)));
  }

  static String sign(JWSAlgorithm alg, String kid, JWTClaimsSet claims, PrivateKey key) {
    return sign(new JWSHeader.Builder(alg).keyID(kid).type(JOSEObjectType.JWT).build(), claims, key);
  }

  static String sign(JWSHeader header, JWTClaimsSet claims, PrivateKey key) {
    try {
      JWSSigner signer = key instanceof ECPrivateKey ec ? new ECDSASigner(ec) : new RSASSASigner((RSAPrivateKey) key);
      SignedJWT jwt = new SignedJWT(header, claims);
      jwt.sign(signer);
      return jwt.serialize();
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A self-signed service-account JWT the way Google's auth library makes one: RS256, typ JWT,
   * kid = private_key_id, iss = sub = client_email, iat now, exp an hour on, and either an aud
   * (audience non-null) or a scope claim.
   */
  static String serviceAccountJwt(String email, String keyId, PrivateKey key, Instant now, String audience,
      String scope) {
    JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder().issuer(email).subject(email)
        .issueTime(Date.from(now)).expirationTime(Date.from(now.plusSeconds(3600)));
    if (audience != null) {
      claims.audience(audience);
    }
    if (scope != null) {
      claims.claim("scope", scope);
    }
    return sign(JWSAlgorithm.RS256, keyId, claims.build(), key);
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }

  static Path write(Path file, String text) {
    try {
      return Files.writeString(file, text);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A Google service-account key file, as the Cloud console gives it. */
  public static Path serviceAccountFile(Path file, String email, String keyId, KeyPair keys) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("type", "service_account");
    json.put("project_id", "tabula-test");
    json.put("private_key_id", keyId);
    json.put("private_key", pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
    json.put("client_email", email);
    json.put("client_id", "123456789012345678901");
    json.put("auth_uri", "https://accounts.google.com/o/oauth2/auth");
    json.put("token_uri", "https://oauth2.googleapis.com/token");
    json.put("auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs");
    json.put("universe_domain", "googleapis.com");
    return write(file, JSONObjectUtils.toJSONString(json));
  }

  /** The refusal's problem is {@code problem}, and its reason quotes no 8 characters of the token. */
  static Authentication.Refused assertRefused(AuthProblem problem, Authentication outcome, String token) {
    Authentication.Refused refused = assertInstanceOf(Authentication.Refused.class, outcome);
    assertEquals(problem, refused.problem(), refused.reason());
    assertQuotesNothingOf(refused.reason(), token);
    return refused;
  }

  /**
   * {@code reason} holds no 8 characters in a row of {@code token}, nor all of a token of 6 or 7
   * (shorter ones are letters any sentence has).
   */
  static void assertQuotesNothingOf(String reason, String token) {
    int window = Math.min(8, token.length());
    if (window < 6) {
      return;
    }
    for (int i = 0; i + window <= token.length(); i++) {
      String part = token.substring(i, i + window);
      assertFalse(reason.contains(part), () -> "the reason '" + reason + "' quotes the token");
    }
  }
}
