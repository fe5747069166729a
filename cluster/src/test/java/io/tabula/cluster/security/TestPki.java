package io.tabula.cluster.security;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority for tests: real RSA keys and X.509 certificates (made with
 * BouncyCastle), written as the PEM files an operator gives a node ({@code --tls-cert},
 * {@code --tls-key}, {@code --tls-client-ca}). Certificates name {@code localhost} and
 * {@code 127.0.0.1}, so clients verify them against a loopback address, unless issued for
 * another host ({@link #issueFor}).
 */
public final class TestPki {
  private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime());
  private final String name;
  private final KeyPair keys;
  private final X509Certificate certificate;

  private TestPki(String name, KeyPair keys, X509Certificate certificate) {
    this.name = name;
    this.keys = keys;
    this.certificate = certificate;
  }

  /** A new self-signed CA named {@code CN=name}. */
  public static TestPki ca(String name) {
    KeyPair keys = rsa();
    X500Name subject = new X500Name("CN=" + name);
    return new TestPki(name, keys, sign(subject, keys, subject, keys, null));
  }

  /** A leaf certificate for {@code subject} (such as {@code CN=node,O=tabula}), signed by this CA. */
  public Issued issue(String subject) {
    return issue(subject, new GeneralName[] {new GeneralName(GeneralName.dNSName, "localhost"),
        new GeneralName(GeneralName.iPAddress, "127.0.0.1")});
  }

  /** A leaf certificate for {@code subject} naming only the host {@code dnsName}, signed by this CA. */
  public Issued issueFor(String subject, String dnsName) {
    return issue(subject, new GeneralName[] {new GeneralName(GeneralName.dNSName, dnsName)});
  }

  private Issued issue(String subject, GeneralName[] names) {
    KeyPair leaf = rsa();
    return new Issued(sign(new X500Name(subject), leaf, new X500Name("CN=" + name), keys, names), leaf);
  }

  /**
   * A leaf certificate for {@code subject} naming {@code 127.0.0.1} and exactly the DNS names
   * {@code dnsNames}, signed by this CA. Nodes of one cluster share a DNS name: Artery's TLS
   * (Pekko's rotating-keys engine) accepts a peer only when its certificate and the node's own
   * have a common name (their CN or a DNS subject alternative name).
   */
  public Issued issue(String subject, String... dnsNames) {
    GeneralName[] names = new GeneralName[dnsNames.length + 1];
    for (int i = 0; i < dnsNames.length; i++) {
      names[i] = new GeneralName(GeneralName.dNSName, dnsNames[i]);
    }
    names[dnsNames.length] = new GeneralName(GeneralName.iPAddress, "127.0.0.1");
    return issue(subject, names);
  }

  /** The CA's certificate. */
  public X509Certificate certificate() {
    return certificate;
  }

  /** Writes the CA's certificate to {@code file}; returns it. */
  public Path writeCertificate(Path file) {
    return write(file, certificate);
  }

  /** A certificate this CA issued, with its key. */
  public record Issued(X509Certificate certificate, KeyPair keys) {
    /** Writes the certificate to {@code dir/name.crt} and its PKCS#8 key to {@code dir/name.key}. */
    public KeyFiles write(Path dir, String name) {
      return new KeyFiles(TestPki.write(dir.resolve(name + ".crt"), certificate),
          TestPki.write(dir.resolve(name + ".key"), keys.getPrivate()));
    }
  }

  /** A certificate file and its key file. */
  public record KeyFiles(Path cert, Path key) {}

  private static KeyPair rsa() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
      g.initialize(2048);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A CA's certificate when {@code names} is null, else a leaf's naming them. */
  private static X509Certificate sign(X500Name subject, KeyPair subjectKeys, X500Name issuer, KeyPair issuerKeys,
      GeneralName[] names) {
    boolean ca = names == null;
    Instant now = Instant.now();
    try {
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(
          SERIAL.incrementAndGet()), Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(
          30))), subject, subjectKeys.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
      if (ca) {
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      } else {
        b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
      }
      return new JcaX509CertificateConverter().getCertificate(b.build(
          new JcaContentSignerBuilder("SHA256withRSA").build(issuerKeys.getPrivate())));
    } catch (OperatorCreationException | IOException | GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Path write(Path file, Object pemObject) {
    StringWriter text = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(text)) {
      // A key as PKCS#8 ("BEGIN PRIVATE KEY"), as openssl genpkey writes it.
      w.writeObject(pemObject instanceof java.security.PrivateKey k ? new JcaPKCS8Generator(k, null) : pemObject);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.writeString(tmp, text.toString());
      // Replaced whole, as an operator's rotation would (a reader never sees half a file).
      Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
