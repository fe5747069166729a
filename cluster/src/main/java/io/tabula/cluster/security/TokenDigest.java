package io.tabula.cluster.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The SHA-256 digest of a token, in hex: what static tokens are looked up by, and what refused
 * JWTs are remembered by, so no table holds a token a client could use. Stateless.
 */
final class TokenDigest {
  private TokenDigest() {}

  static String of(String token) {
    try {
      return HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
