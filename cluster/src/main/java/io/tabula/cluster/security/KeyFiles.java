package io.tabula.cluster.security;

import com.nimbusds.jose.Algorithm;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.JSONObjectUtils;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The key files {@code tabula.security} names, read once when the settings are: JWK sets, PEM
 * keys and Google service-account key files. Stateless; every failure is an
 * {@link IllegalArgumentException} naming the file and what is wrong with it (the caller adds the
 * settings key). Never puts a private key's text in a message.
 */
final class KeyFiles {
  /** Larger key files are refused unread: a JWK set of a few hundred keys is far smaller. */
  static final long MAX_FILE_BYTES = 1 << 20;

  private KeyFiles() {}

  /** The text of {@code file}, UTF-8. */
  static String read(Path file) {
    try {
      if (Files.size(file) > MAX_FILE_BYTES) {
        throw new IllegalArgumentException(file + " is larger than " + MAX_FILE_BYTES + " bytes");
      }
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + file + " ("
          + (e instanceof NoSuchFileException ? "no such file" : e.toString()) + ")");
    }
  }

  /** The key of a PEM public key or certificate, given as the text itself or as the file holding it. */
  static PublicKey pem(String textOrFile, Path baseDir) {
    if (textOrFile.strip().startsWith("-----BEGIN")) {
      return PemKeys.publicKey(textOrFile);
    }
    Path file = baseDir.resolve(textOrFile);
    String text = read(file);
    try {
      return PemKeys.publicKey(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage());
    }
  }

  /**
   * The signing keys of the JWK set in {@code file} ({@code {"keys": [...]}}): RSA and EC keys
   * not marked for encryption ({@code use: enc}), each under its {@code kid} (required when the
   * set has more than one key, and unique) and restricted to its {@code alg} when it has one.
   */
  static List<VerificationKey> jwks(Path file) {
    String text = read(file);
    try {
      List<JWK> all = JWKSet.parse(text).getKeys();
      if (all.isEmpty()) {
        throw new IllegalArgumentException("no keys");
      }
      List<VerificationKey> keys = new ArrayList<>();
      Set<String> ids = new HashSet<>();
      for (JWK jwk : all) {
        String at = "key " + keys.size();
        if (KeyUse.ENCRYPTION.equals(jwk.getKeyUse())) {
          throw new IllegalArgumentException(at + " is for encryption (use: enc)");
        }
        Optional<String> kid = Optional.ofNullable(jwk.getKeyID());
        if (kid.isEmpty() && all.size() > 1) {
          throw new IllegalArgumentException(at + " has no kid; a set of several keys needs one on each");
        }
        if (kid.isPresent() && !ids.add(kid.get())) {
          throw new IllegalArgumentException(at + ": kid " + kid.get() + " is given twice");
        }
        Optional<String> alg = Optional.ofNullable(jwk.getAlgorithm()).map(Algorithm::getName);
        VerificationKey key;
        try {
          key = new VerificationKey(kid, publicKey(jwk), alg);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(at + ": " + e.getMessage());
        }
        if (alg.isPresent() && !SigningKey.of(key).fits(JWSAlgorithm.parse(alg.get()))) {
          throw new IllegalArgumentException(at + ": alg " + alg.get()
              + " is not accepted, or not for a key of its type");
        }
        keys.add(key);
      }
      return List.copyOf(keys);
    } catch (ParseException e) {
      throw new IllegalArgumentException(file + " is not a JWK set (" + e.getMessage() + ")");
    } catch (JOSEException e) {
      throw new IllegalArgumentException(file + " holds a key that does not convert (" + e.getMessage() + ")");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage());
    }
  }

  private static PublicKey publicKey(JWK jwk) throws JOSEException {
    if (jwk instanceof RSAKey rsa) {
      return rsa.toRSAPublicKey();
    }
    if (jwk instanceof ECKey ec) {
      return ec.toECPublicKey();
    }
    throw new IllegalArgumentException("a key of type " + jwk.getKeyType() + "; only RSA and EC keys verify tokens");
  }

  /**
   * The key of a Google service-account key file (the JSON the Cloud console gives): its
   * {@code client_email}, {@code private_key_id}, and the public half of its {@code private_key}.
   */
  static ServiceAccountKey serviceAccount(Path file) {
    String text = read(file);
    try {
      Map<String, Object> json = JSONObjectUtils.parse(text);
      String type = JSONObjectUtils.getString(json, "type");
      if (!"service_account".equals(type)) {
        throw new IllegalArgumentException("type is " + type + ", not service_account");
      }
      String email = required(json, "client_email");
      String keyId = required(json, "private_key_id");
      RSAPublicKey key = PemKeys.publicHalfOfRsaPrivateKey(required(json, "private_key"));
      return new ServiceAccountKey(email, keyId, key);
    } catch (ParseException e) {
      throw new IllegalArgumentException(file + " is not a service-account key file (" + e.getMessage() + ")");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage());
    }
  }

  private static String required(Map<String, Object> json, String name) throws ParseException {
    String value = JSONObjectUtils.getString(json, name);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("no " + name);
    }
    return value;
  }
}
