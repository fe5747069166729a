package io.tabula.cluster.security;

import com.nimbusds.jose.jwk.Curve;
import java.security.PublicKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One public key a JWT's signature may be checked with: an RSA key of at least 2048 bits (for
 * RS256/384/512 and PS256/384/512) or an EC key on P-256, P-384 or P-521 (for ES256, ES384,
 * ES512 respectively). {@code keyId} is the {@code kid} a token must name to use it (empty: any
 * token of its issuer may); {@code algorithm}, when present, is the only {@code alg} it may be
 * used with (a JWK's {@code alg}). Immutable.
 */
public record VerificationKey(Optional<String> keyId, PublicKey publicKey, Optional<String> algorithm) {
  static final int MIN_RSA_BITS = 2048;
  private static final Set<Curve> CURVES = Set.of(Curve.P_256, Curve.P_384, Curve.P_521);

  /** @throws IllegalArgumentException for a key of another type, a short RSA key, or another curve */
  public VerificationKey {
    Objects.requireNonNull(keyId, "keyId");
    Objects.requireNonNull(publicKey, "publicKey");
    Objects.requireNonNull(algorithm, "algorithm");
    if (publicKey instanceof RSAPublicKey rsa) {
      if (rsa.getModulus().bitLength() < MIN_RSA_BITS) {
        throw new IllegalArgumentException("an RSA key of " + rsa.getModulus().bitLength()
            + " bits; at least " + MIN_RSA_BITS + " are needed");
      }
    } else if (publicKey instanceof ECPublicKey ec) {
      Curve curve = Curve.forECParameterSpec(ec.getParams());
      if (curve == null || !CURVES.contains(curve)) {
        throw new IllegalArgumentException("an EC key on a curve other than P-256, P-384 or P-521");
      }
    } else {
      throw new IllegalArgumentException("a " + publicKey.getAlgorithm() + " key; only RSA and EC keys are accepted");
    }
  }

  /** A key any token of its issuer may name, for any algorithm of its type. */
  public static VerificationKey of(PublicKey publicKey) {
    return new VerificationKey(Optional.empty(), publicKey, Optional.empty());
  }

  /** A key tokens name by {@code keyId}. */
  public static VerificationKey of(String keyId, PublicKey publicKey) {
    return new VerificationKey(Optional.of(keyId), publicKey, Optional.empty());
  }
}
