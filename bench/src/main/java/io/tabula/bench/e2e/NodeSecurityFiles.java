package io.tabula.bench.e2e;

import io.tabula.bench.DataDirectory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * What a secured node and its clients need, made in a fresh temporary folder the way
 * docs/security.md's setup makes it: a CA and a node certificate for {@code localhost} and
 * {@code 127.0.0.1} signed by it, with their RSA keys ({@code openssl}, which must be on the
 * path), and an auth file giving one principal, {@value #PRINCIPAL}, a random static token and
 * the admin role (the bench creates tables). {@link #close()} deletes the folder. Not
 * thread-safe; its getters are.
 */
final class NodeSecurityFiles implements AutoCloseable {
  static final String PRINCIPAL = "user:bench@example.com";
  private static final long OPENSSL_SECONDS = 60;

  private final Path folder;
  private final String token;

  private NodeSecurityFiles(Path folder, String token) {
    this.folder = folder;
    this.token = token;
  }

  /** Makes the keys, certificates and auth file; throws naming the openssl step that failed. */
  static NodeSecurityFiles create() throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("tabula-tls-");
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    NodeSecurityFiles files = new NodeSecurityFiles(dir,
        Base64.getUrlEncoder().withoutPadding().encodeToString(random));
    try {
      openssl(dir, "req", "-x509", "-newkey", "rsa:3072", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
          "-days", "30", "-subj", "/CN=Tabula bench CA", "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign");
      openssl(dir, "req", "-newkey", "rsa:3072", "-nodes", "-keyout", "node.key", "-out", "node.csr",
          "-subj", "/CN=localhost");
      Files.writeString(dir.resolve("node.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
          + "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
          + "extendedKeyUsage=serverAuth,clientAuth\n", StandardCharsets.US_ASCII);
      openssl(dir, "x509", "-req", "-in", "node.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
          "-out", "node.crt", "-days", "30", "-extfile", "node.ext");
      Files.writeString(files.auth(), "# Written by the bench: one caller, an admin.\n"
          + "tabula.security {\n"
          + "  tokens = [ { principal = \"" + PRINCIPAL + "\", token = \"" + files.token + "\" } ]\n"
          + "  admins = [\"" + PRINCIPAL + "\"]\n"
          + "}\n", StandardCharsets.UTF_8);
      return files;
    } catch (IOException | InterruptedException | RuntimeException e) {
      files.close();
      throw e;
    }
  }

  private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    byte[] output;
    try (InputStream out = p.getInputStream()) {
      output = out.readAllBytes();
    }
    if (!p.waitFor(OPENSSL_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("openssl " + args[0] + " did not finish within " + OPENSSL_SECONDS + " s");
    }
    if (p.exitValue() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed with code " + p.exitValue() + ":\n"
          + new String(output, StandardCharsets.UTF_8));
    }
  }

  /** The CA's certificate (PEM): what clients trust. */
  Path ca() {
    return folder.resolve("ca.crt");
  }

  /** The node's certificate (PEM), for {@code localhost} and {@code 127.0.0.1}. */
  Path nodeCertificate() {
    return folder.resolve("node.crt");
  }

  /** The node's private key (PEM, unencrypted). */
  Path nodeKey() {
    return folder.resolve("node.key");
  }

  Path auth() {
    return folder.resolve("auth.conf");
  }

  /** The static token of {@link #PRINCIPAL}. */
  String token() {
    return token;
  }

  /** The node's flags: its certificate and key, and the auth file. */
  List<String> serverArguments() {
    return List.of("--tls-cert", nodeCertificate().toString(), "--tls-key", nodeKey().toString(), "--auth",
        auth().toString());
  }

  /** A TLS context that trusts the CA only, for the JDK's HTTP client. */
  SSLContext trust() throws IOException {
    try (InputStream in = Files.newInputStream(ca())) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca" + i++, c);
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot trust " + ca() + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void close() throws IOException {
    if (Files.exists(folder)) {
      DataDirectory.deleteTree(folder);
    }
  }
}
