package io.tabula.cluster.security;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import org.apache.pekko.pki.pem.DERPrivateKeyLoader;
import org.apache.pekko.pki.pem.PEMDecoder;
import org.apache.pekko.pki.pem.PEMLoadingException;

/**
 * PEM files as the JDK's TLS wants them: a certificate chain, a private key (PKCS#8, or
 * PKCS#1 RSA, unencrypted; decoded by Pekko's {@code pekko-pki}), CA certificates as a
 * trust manager, and an {@link SSLContext} made of them. Every failure is a {@link
 * TlsFileException} naming the file and what is wrong with it.
 */
public final class PemFiles {
  private PemFiles() {}

  /** A TLS file that cannot be read or used; the message names the file. */
  public static final class TlsFileException extends IOException {
    private static final long serialVersionUID = 1L;

    TlsFileException(Path file, String problem, Throwable cause) {
      super(file + ": " + problem, cause);
    }
  }

  /** The certificates of {@code file}, in order (the node's own first for a chain). */
  public static List<X509Certificate> certificates(Path file) throws TlsFileException {
    byte[] bytes = read(file);
    try {
      List<X509Certificate> out = new ArrayList<>();
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(
          new ByteArrayInputStream(bytes))) {
        out.add((X509Certificate) c);
      }
      if (out.isEmpty()) {
        throw new TlsFileException(file, "holds no PEM certificate", null);
      }
      return out;
    } catch (CertificateException e) {
      throw new TlsFileException(file, "is not a PEM certificate file (" + e.getMessage() + ")", e);
    }
  }

  /**
   * The first name the first certificate of {@code file} is for: a DNS subject alternative
   * name, else an IP one, else its CN; what a client that trusts it may call it.
   */
  public static String firstName(Path file) throws TlsFileException {
    X509Certificate c = certificates(file).get(0);
    try {
      java.util.Collection<List<?>> names = c.getSubjectAlternativeNames();
      if (names != null) {
        for (int type : new int[] {2, 7}) { // dNSName, iPAddress
          for (List<?> n : names) {
            if (((Integer) n.get(0)) == type) {
              return (String) n.get(1);
            }
          }
        }
      }
    } catch (CertificateException e) {
      throw new TlsFileException(file, "has subject alternative names that cannot be read", e);
    }
    String dn = c.getSubjectX500Principal().getName();
    for (String part : dn.split(",")) {
      if (part.startsWith("CN=")) {
        return part.substring(3);
      }
    }
    throw new TlsFileException(file, "names no host: no subject alternative name, no CN", null);
  }

  /** The private key of {@code file}. */
  public static PrivateKey privateKey(Path file) throws TlsFileException {
    String pem = new String(read(file), StandardCharsets.US_ASCII);
    try {
      return DERPrivateKeyLoader.load(PEMDecoder.decode(pem));
    } catch (PEMLoadingException | IllegalArgumentException e) {
      throw new TlsFileException(file, "is not an unencrypted PEM private key, PKCS#8 or PKCS#1 RSA ("
          + e.getMessage() + ")", e);
    }
  }

  /** Trust managers that accept what chains to one of {@code caFile}'s certificates. */
  public static TrustManager[] trusting(Path caFile) throws TlsFileException {
    List<X509Certificate> cas = certificates(caFile);
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      for (int i = 0; i < cas.size(); i++) {
        store.setCertificateEntry("ca" + i, cas.get(i));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      return tmf.getTrustManagers();
    } catch (GeneralSecurityException | IOException e) {
      throw new TlsFileException(caFile, "cannot be used as trusted certificates (" + e.getMessage() + ")", e);
    }
  }

  /**
   * A TLS context presenting {@code certFile}'s chain with {@code keyFile}'s key, and trusting
   * {@code caFile} when one is given (null: the JDK's default trust).
   */
  public static SSLContext context(Path certFile, Path keyFile, Path caFile) throws TlsFileException {
    List<X509Certificate> chain = certificates(certFile);
    PrivateKey key = privateKey(keyFile);
    TrustManager[] trust = caFile == null ? null : trusting(caFile);
    if (!matches(key, chain.get(0))) {
      throw new TlsFileException(keyFile, "is not the private key of the first certificate in " + certFile, null);
    }
    try {
      char[] none = new char[0];
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("node", key, none, chain.toArray(new Certificate[0]));
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(store, none);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(kmf.getKeyManagers(), trust, null);
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new TlsFileException(keyFile, "does not go with the certificate in " + certFile + " ("
          + e.getMessage() + ")", e);
    }
  }

  /** Whether {@code key} signs what {@code certificate}'s public key verifies. */
  private static boolean matches(PrivateKey key, X509Certificate certificate) {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      default -> key.getAlgorithm(); // Ed25519, Ed448, EdDSA
    };
    byte[] probe = "tabula".getBytes(StandardCharsets.US_ASCII);
    try {
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static byte[] read(Path file) throws TlsFileException {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new TlsFileException(file, "cannot be read (" + e + ")", e);
    }
  }
}
