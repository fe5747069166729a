package io.tabula.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.Objects;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * Which TLS certificates a client accepts from nodes: those signed by the CA certificates
 * of a PEM file (the CA that issued the nodes' {@code --tls-cert}), checked by the JDK's
 * PKIX validation, which {@link TabulaClient.Builder#tls(Path)} and the command line's
 * Management HTTP calls use. The host a connection names is checked against the
 * certificate by the connection, not here. Stateless.
 */
public final class TlsTrust {
  private TlsTrust() {}

  /**
   * A trust manager that accepts certificates chaining to one of the CA certificates in
   * {@code caPemFile} (one or more {@code BEGIN CERTIFICATE} blocks). Throws {@link
   * IllegalArgumentException} naming the file if it cannot be read or holds no certificate.
   */
  public static X509TrustManager fromPemFile(Path caPemFile) {
    Objects.requireNonNull(caPemFile, "caPemFile");
    Collection<? extends Certificate> certificates;
    try (InputStream in = Files.newInputStream(caPemFile)) {
      certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("the CA file " + caPemFile + " does not exist", e);
    } catch (AccessDeniedException e) {
      throw new IllegalArgumentException("the CA file " + caPemFile + " cannot be read: permission denied", e);
    } catch (IOException e) {
      throw new IllegalArgumentException("the CA file " + caPemFile + " cannot be read: " + e.getMessage(), e);
    } catch (CertificateException e) {
      throw new IllegalArgumentException("the CA file " + caPemFile + " is not PEM certificates (BEGIN CERTIFICATE"
          + " blocks): " + e.getMessage(), e);
    }
    if (certificates.isEmpty()) {
      throw new IllegalArgumentException("the CA file " + caPemFile + " holds no certificate (a PEM file of BEGIN"
          + " CERTIFICATE blocks)");
    }
    try {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c : certificates) {
        store.setCertificateEntry("ca-" + i++, c);
      }
      TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(store);
      for (TrustManager m : factory.getTrustManagers()) {
        if (m instanceof X509TrustManager x) {
          return x;
        }
      }
      throw new IllegalStateException("the JDK's " + factory.getAlgorithm() + " trust managers include no X.509 one");
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("the JDK cannot make a trust store of " + caPemFile + ": " + e, e);
    }
  }

  /** A TLS context that trusts what {@code trust} trusts, for clients that take a context ({@code java.net.http}). */
  public static SSLContext context(X509TrustManager trust) {
    Objects.requireNonNull(trust, "trust");
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {trust}, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK has no TLS context: " + e, e);
    }
  }
}
