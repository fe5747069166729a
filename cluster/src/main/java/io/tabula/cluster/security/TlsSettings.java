package io.tabula.cluster.security;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The {@code tabula.node.tls} settings, read once: the node's certificate chain and private
 * key (PEM files) for its gRPC port, Management HTTP and, unless the cluster has its own,
 * node-to-node traffic; the CA whose client certificates the gRPC port accepts; the CA of the
 * cluster's members; how often the files are looked at for a rotation.
 *
 * @param certFile the node's certificate chain (PEM), empty when the node has no TLS
 * @param keyFile its private key (PEM, PKCS#8 or PKCS#1), present exactly when {@code certFile} is
 * @param clientCaFile the CA certificates (PEM) of client certificates the gRPC port accepts; empty: none asked for
 * @param clusterCaFile the CA certificates (PEM) a member's certificate must chain to; empty: the node's own
 *     certificate, so only holders of the same key pair are members
 * @param checkFilesEvery how often a new connection looks whether the files changed
 */
public record TlsSettings(Optional<Path> certFile, Optional<Path> keyFile, Optional<Path> clientCaFile,
    Optional<Path> clusterCaFile, Duration checkFilesEvery) {

  public TlsSettings {
    if (certFile.isPresent() != keyFile.isPresent()) {
      throw new IllegalArgumentException("tabula.node.tls: cert-file and key-file go together (--tls-cert and"
          + " --tls-key), but only " + (certFile.isPresent() ? "cert-file" : "key-file") + " is set");
    }
    if (certFile.isEmpty() && (clientCaFile.isPresent() || clusterCaFile.isPresent())) {
      throw new IllegalArgumentException("tabula.node.tls: " + (clientCaFile.isPresent() ? "client-ca-file"
          : "cluster-ca-file") + " needs the node's own certificate (cert-file and key-file)");
    }
    if (checkFilesEvery.isNegative() || checkFilesEvery.isZero()) {
      throw new IllegalArgumentException("tabula.node.tls.check-files-every must be positive, was "
          + checkFilesEvery);
    }
  }

  /** No TLS. */
  public static TlsSettings none() {
    return new TlsSettings(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
        Duration.ofSeconds(10));
  }

  /** Reads {@code tls} (the {@code tabula.node.tls} subtree); file names are taken from the working directory. */
  public static TlsSettings from(Config tls) {
    return new TlsSettings(file(tls, "cert-file"), file(tls, "key-file"), file(tls, "client-ca-file"),
        file(tls, "cluster-ca-file"), tls.getDuration("check-files-every"));
  }

  private static Optional<Path> file(Config tls, String key) {
    String name = tls.getString(key).trim();
    return name.isEmpty() ? Optional.empty() : Optional.of(Path.of(name).toAbsolutePath());
  }

  /** Whether the node's ports use TLS. */
  public boolean enabled() {
    return certFile.isPresent();
  }
}
