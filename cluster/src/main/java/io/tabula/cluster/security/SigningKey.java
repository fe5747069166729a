package io.tabula.cluster.security;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Set;

/**
 * A {@link VerificationKey} with its signature verifier, made once. A key is used only for the
 * algorithms of its own type, so a token cannot pick how its key is read (no RSA key taken as an
 * HMAC secret, no EC algorithm on an RSA key): RSA keys for RS256/384/512 and PS256/384/512, EC
 * keys for the one ES algorithm of their curve, and only the JWK's {@code alg} when it names one.
 * Immutable and thread-safe (Nimbus's RSA and ECDSA verifiers keep no state between calls).
 */
final class SigningKey {
  /** Every algorithm a token may be signed with. */
  static final Set<JWSAlgorithm> ACCEPTED = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384, JWSAlgorithm.RS512,
      JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512, JWSAlgorithm.ES256, JWSAlgorithm.ES384,
      JWSAlgorithm.ES512);

  private final VerificationKey key;
  private final JWSVerifier verifier;
  private final Set<JWSAlgorithm> algorithms;

  private SigningKey(VerificationKey key, JWSVerifier verifier, Set<JWSAlgorithm> algorithms) {
    this.key = key;
    this.verifier = verifier;
    this.algorithms = algorithms;
  }

  static SigningKey of(VerificationKey key) {
    try {
      if (key.publicKey() instanceof RSAPublicKey rsa) {
        return new SigningKey(key, new RSASSAVerifier(rsa), JWSAlgorithm.Family.RSA);
      }
      ECPublicKey ec = (ECPublicKey) key.publicKey();
      Curve curve = Curve.forECParameterSpec(ec.getParams());
      Set<JWSAlgorithm> algorithms = curve.equals(Curve.P_256) ? Set.of(JWSAlgorithm.ES256)
          : curve.equals(Curve.P_384) ? Set.of(JWSAlgorithm.ES384) : Set.of(JWSAlgorithm.ES512);
      return new SigningKey(key, new ECDSAVerifier(ec), algorithms);
    } catch (JOSEException e) {
      throw new IllegalArgumentException("a key Nimbus cannot verify with (" + e.getMessage() + ")", e);
    }
  }

  /** Whether a token naming {@code kid} (null: none) may be checked with this key. */
  boolean named(String kid) {
    return kid == null || key.keyId().isEmpty() || key.keyId().get().equals(kid);
  }

  /** Whether this key may check a signature made with {@code algorithm}. */
  boolean fits(JWSAlgorithm algorithm) {
    return algorithms.contains(algorithm) && key.algorithm().map(algorithm.getName()::equals).orElse(true);
  }

  JWSVerifier verifier() {
    return verifier;
  }
}
