package io.tabula.cluster.security;

import java.io.ByteArrayInputStream;
import java.security.KeyFactory;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Public keys read from PEM text: {@code PUBLIC KEY} (X.509 SubjectPublicKeyInfo, RSA or EC),
 * {@code CERTIFICATE} (its subject's key; its dates and signer are not checked, it only carries
 * the key), and the public half of an RSA {@code PRIVATE KEY} (PKCS#8, as in a Google
 * service-account key file), derived from the private key's modulus and public exponent so the
 * private key is not kept. PKCS#1 ({@code RSA PUBLIC KEY}, {@code RSA PRIVATE KEY}) is refused
 * with a hint. Stateless; every failure is an {@link IllegalArgumentException} saying what is wrong.
 */
final class PemKeys {
  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*)-----END \\1-----");

  private PemKeys() {}

  /** The key of the first PEM block of {@code pem}, a public key or a certificate. */
  static PublicKey publicKey(String pem) {
    Block block = block(pem);
    return switch (block.type()) {
      case "PUBLIC KEY" -> subjectPublicKey(block.der());
      case "CERTIFICATE" -> certificateKey(block.der());
      case "RSA PUBLIC KEY" -> throw new IllegalArgumentException(
          "a PKCS#1 RSA PUBLIC KEY; give the X.509 form (-----BEGIN PUBLIC KEY-----,"
              + " openssl rsa -RSAPublicKey_in -pubout)");
      default -> throw new IllegalArgumentException("a PEM " + block.type()
          + " block; a PUBLIC KEY or a CERTIFICATE is needed");
    };
  }

  /** The public half of the RSA key in the PKCS#8 {@code PRIVATE KEY} block of {@code pem}. */
  static RSAPublicKey publicHalfOfRsaPrivateKey(String pem) {
    Block block = block(pem);
    if (!block.type().equals("PRIVATE KEY")) {
      throw new IllegalArgumentException("a PEM " + block.type() + " block; a PKCS#8 PRIVATE KEY is needed");
    }
    try {
      KeyFactory rsa = KeyFactory.getInstance("RSA");
      if (!(rsa.generatePrivate(new PKCS8EncodedKeySpec(block.der())) instanceof RSAPrivateCrtKey key)) {
        throw new IllegalArgumentException("an RSA private key without its public exponent (not CRT form)");
      }
      return (RSAPublicKey) rsa.generatePublic(new RSAPublicKeySpec(key.getModulus(), key.getPublicExponent()));
    } catch (InvalidKeySpecException e) {
      throw new IllegalArgumentException("a PRIVATE KEY that is not a PKCS#8 RSA key (" + e.getMessage() + ")");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JVM has no RSA key factory", e);
    }
  }

  private static PublicKey subjectPublicKey(byte[] der) {
    for (String algorithm : new String[] {"RSA", "EC"}) {
      try {
        return KeyFactory.getInstance(algorithm).generatePublic(new X509EncodedKeySpec(der));
      } catch (InvalidKeySpecException e) {
        // not a key of this type: try the next
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("the JVM has no " + algorithm + " key factory", e);
      }
    }
    throw new IllegalArgumentException("a PUBLIC KEY that is neither an RSA nor an EC key");
  }

  private static PublicKey certificateKey(byte[] der) {
    try {
      return CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der)).getPublicKey();
    } catch (CertificateException e) {
      throw new IllegalArgumentException("a CERTIFICATE that does not parse (" + e.getMessage() + ")");
    }
  }

  private record Block(String type, byte[] der) {}

  private static Block block(String pem) {
    Matcher m = BLOCK.matcher(pem);
    if (!m.find()) {
      throw new IllegalArgumentException("no PEM block (-----BEGIN ...----- base64 -----END ...-----)");
    }
    try {
      return new Block(m.group(1), Base64.getDecoder().decode(m.group(2).replaceAll("\\s", "")));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("a PEM " + m.group(1) + " block whose base64 does not decode");
    }
  }
}
