package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.util.Base64URL;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Authenticator#authenticate} never throws and never quotes the token, whatever it is
 * sent: random headers, a valid JWT mutated byte by byte, and hand-made headers and claims of
 * every wrong shape (wrong JSON types, deep nesting, huge numbers, crit, embedded keys). Seeded:
 * the seed is printed, {@code -Dtabula.seed=N} replays a run.
 */
class HostileTokensTest {
  private static final Instant T = Instant.parse("2026-03-01T12:00:00Z");
  private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~+/= \t{}\"";

  @TempDir
  Path dir;

  @Test
  void nothingItIsSentMakesItThrowOrQuoteTheToken() {
    long seed = Long.getLong("tabula.seed", System.nanoTime());
    System.out.println("HostileTokensTest seed = " + seed + " (rerun with -Dtabula.seed=" + seed + ")");
    Random random = new Random(seed);
    KeyPair rsa = JwtFixtures.rsa();
    JwtFixtures.write(dir.resolve("k.pem"), JwtFixtures.pem("PUBLIC KEY", rsa.getPublic().getEncoded()));
    Authenticator auth = Authenticator.from(AuthSettings.from(ConfigFactory.parseString(
        "jwt.issuers = [ { issuer = i, audiences = [a], public-key-pem = k.pem } ]"), dir), new ManualClock(T));
    String valid =
        JwtFixtures.sign(JWSAlgorithm.RS256, null, JwtFixtures.claims("i", "a", T).build(), rsa.getPrivate());
    assertInstanceOf(Authentication.Authenticated.class, auth.authenticate("Bearer " + valid));

    for (int i = 0; i < 2000; i++) {
      char[] mutated = valid.toCharArray();
      for (int flips = 1 + random.nextInt(3); flips > 0; flips--) {
        mutated[random.nextInt(mutated.length)] = ALPHABET.charAt(random.nextInt(ALPHABET.length()));
      }
      check(auth, new String(mutated));
      check(auth, valid.substring(0, random.nextInt(valid.length())));
      StringBuilder noise = new StringBuilder();
      for (int n = random.nextInt(200); n > 0; n--) {
        noise.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
      }
      check(auth, noise.toString());
    }
    String signature = valid.substring(valid.lastIndexOf('.'));
    List<String> headers = List.of("{}", "[]", "null", "\"RS256\"", "{\"alg\":1}", "{\"alg\":null}",
        "{\"alg\":\"RS256\",\"crit\":[\"exp\"],\"exp\":1}", "{\"alg\":\"RS256\",\"kid\":[1]}",
        "{\"alg\":\"RS256\",\"jwk\":{\"kty\":\"oct\",\"k\":\"AAAA\"}}", "{\"alg\":\"RSA-OAEP\",\"enc\":\"A128GCM\"}",
        "{\"alg\":\"EdDSA\"}", "{\"alg\":\"none\",\"typ\":\"JWT\"}", "{\"alg\":\"RS256\"," + "[".repeat(3000) + "}",
        "{\"alg\":\"RS256\",\"b64\":false,\"crit\":[\"b64\"]}");
    List<String> claims = List.of("{}", "[]", "1", "{\"iss\":1}", "{\"iss\":\"i\",\"exp\":\"soon\"}",
        "{\"iss\":\"i\",\"aud\":[1,2]}", "{\"iss\":\"i\",\"exp\":1e308}", "{\"iss\":\"i\",\"exp\":-1e308}",
        "{\"iss\":\"i\",\"exp\":99999999999999999999999}",
        "{\"iss\":\"i\",\"a\":" + "[".repeat(3000) + "]".repeat(3000) + "}",
        "{\"iss\":\"i\",\"nbf\":{}}");
    for (String header : headers) {
      for (String claim : claims) {
        check(auth, Base64URL.encode(header) + "." + Base64URL.encode(claim) + signature);
        check(auth, Base64URL.encode(header) + "." + Base64URL.encode(claim) + ".");
      }
    }
  }

  private static void check(Authenticator auth, String token) {
    Authentication outcome = auth.authenticate("Bearer " + token);
    assertNotNull(outcome);
    if (outcome instanceof Authentication.Refused refused) {
      JwtFixtures.assertQuotesNothingOf(refused.reason(), token.strip());
    }
  }
}
