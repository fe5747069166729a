package io.tabula.cluster.security;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLContext;
import org.apache.pekko.http.javadsl.ConnectionContext;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a node calls another member's Management HTTP (a view of the whole directory forwarded
 * to the master's node): plain HTTP for a node without TLS; for a node with TLS, HTTPS trusting
 * the cluster's CA ({@code cluster-ca-file}, else the node's own certificate), which every
 * member's certificate chains to (Artery's TLS requires it), with the member's host name
 * verified against its certificate. No client certificate is presented: the forwarded request
 * carries the caller's own credentials.
 *
 * <p>The CA file is read again when its size or modification time changes, looked at most
 * once per {@code check-files-every}; one that cannot be used keeps the previous context, with
 * a warning. The context is kept between calls, as Pekko HTTP pools connections per context.
 * Thread-safe.
 */
public final class PeerHttp {
  private static final Logger LOG = LoggerFactory.getLogger(PeerHttp.class);

  private final Optional<Path> ca;
  private final long checkEveryNanos;
  private final LongSupplier nanoTime;
  @GuardedBy("this")
  private List<Object> stamp;
  @GuardedBy("this")
  private long checkedAt;
  @GuardedBy("this")
  private HttpsConnectionContext context;

  private PeerHttp(Optional<Path> ca, long checkEveryNanos, LongSupplier nanoTime) throws PemFiles.TlsFileException {
    this.ca = ca;
    this.checkEveryNanos = checkEveryNanos;
    this.nanoTime = nanoTime;
    this.stamp = ca.isPresent() ? stamp(ca.get()) : List.of();
    this.context = ca.isPresent() ? load(ca.get()) : null;
    this.checkedAt = nanoTime.getAsLong();
  }

  /**
   * The peer client of a node with {@code tls}; its CA file is read now, and one that cannot be
   * used fails the start, naming it.
   */
  public static PeerHttp of(TlsSettings tls) throws PemFiles.TlsFileException {
    Optional<Path> ca = tls.enabled() ? Optional.of(tls.clusterCaFile().orElse(tls.certFile().orElseThrow()))
        : Optional.empty();
    return new PeerHttp(ca, tls.checkFilesEvery().toNanos(), System::nanoTime);
  }

  /** The URI scheme of a member's Management HTTP: {@code https} or {@code http}. */
  public String scheme() {
    return ca.isPresent() ? "https" : "http";
  }

  /** The TLS of a call to a member, after a look at the CA file if one is due; empty for plain HTTP. */
  public synchronized Optional<HttpsConnectionContext> context() {
    if (ca.isEmpty()) {
      return Optional.empty();
    }
    long now = nanoTime.getAsLong();
    if (now - checkedAt >= checkEveryNanos) {
      checkedAt = now;
      List<Object> seen = stamp(ca.get());
      if (!seen.equals(stamp)) {
        stamp = seen;
        try {
          context = load(ca.get());
          LOG.info("TLS: loaded the changed cluster CA {} for calls to other members' Management HTTP", ca.get());
        } catch (PemFiles.TlsFileException e) {
          LOG.warn("TLS: the cluster CA changed but cannot be used, so calls to other members' Management HTTP"
              + " keep the previous one until it changes again: {}", e.getMessage());
        }
      }
    }
    return Optional.of(context);
  }

  private static HttpsConnectionContext load(Path ca) throws PemFiles.TlsFileException {
    try {
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(null, PemFiles.trusting(ca), null);
      return ConnectionContext.httpsClient(ssl); // verifies the member's host name against its certificate
    } catch (GeneralSecurityException e) {
      throw new PemFiles.TlsFileException(ca, "cannot make a TLS client trusting it (" + e.getMessage() + ")", e);
    }
  }

  private static List<Object> stamp(Path file) {
    try {
      return List.of(Files.getLastModifiedTime(file), Files.size(file));
    } catch (IOException e) {
      return List.of(e.getClass().getSimpleName());
    }
  }
}
