package io.tabula.cluster.security;

import java.security.interfaces.RSAPublicKey;
import java.util.Objects;

/**
 * One key of a Google service account ({@code tabula.security.service-accounts}): the account's
 * self-signed JWTs have {@code iss = sub = clientEmail}, {@code kid = keyId} (the key file's
 * {@code private_key_id}) and are signed RS256 with the private half of {@code publicKey}. The
 * caller is {@code serviceAccount:<clientEmail>}. Immutable; holds no private key.
 */
public record ServiceAccountKey(String clientEmail, String keyId, RSAPublicKey publicKey) {
  /** @throws IllegalArgumentException for an empty email or key id, or a key {@link VerificationKey} refuses */
  public ServiceAccountKey {
    Objects.requireNonNull(publicKey, "publicKey");
    if (clientEmail == null || !Principal.isMember("serviceAccount:" + clientEmail) || !clientEmail.contains("@")) {
      throw new IllegalArgumentException("a service account needs its email (client_email)");
    }
    if (keyId == null || keyId.isEmpty()) {
      throw new IllegalArgumentException("a service account key needs its id (private_key_id)");
    }
    VerificationKey.of(keyId, publicKey);
  }

  /** The caller a token of this key is made by. */
  public Principal principal() {
    return new Principal("serviceAccount:" + clientEmail);
  }

  VerificationKey verificationKey() {
    return VerificationKey.of(keyId, publicKey);
  }
}
