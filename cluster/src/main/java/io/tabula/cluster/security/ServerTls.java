package io.tabula.cluster.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import org.apache.pekko.http.javadsl.ConnectionContext;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS side of a node's server ports (gRPC and Management HTTP): a server {@link
 * SSLEngine} per connection from the certificate, key and client CA in {@link TlsSettings},
 * loaded again when one of those files changes, so a rotated certificate serves new
 * connections without a restart (connections already open keep the one they began with).
 *
 * <p>A new connection looks at the files' size and modification time at most once per
 * {@code check-files-every}. A change that does not load (a key written before its
 * certificate, a file half copied) keeps the previous context and is logged once per change
 * as a warning; the next change is tried again. With a client CA, the engine asks for a
 * client certificate but does not require one (a token may authenticate the call instead):
 * {@link Guard} takes a verified certificate's subject as the principal.
 *
 * <p>Thread-safe: engines are made on the connections' threads at once.
 */
public final class ServerTls {
  private static final Logger LOG = LoggerFactory.getLogger(ServerTls.class);
  private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

  private final Path cert;
  private final Path key;
  private final Optional<Path> clientCa;
  private final long checkEveryNanos;
  private final LongSupplier nanoTime;
  /** The context new connections get; replaced whole by a reload. */
  private volatile SSLContext context;
  @GuardedBy("this")
  private List<Object> stamps;
  @GuardedBy("this")
  private long checkedAt;

  private ServerTls(TlsSettings settings, LongSupplier nanoTime) throws PemFiles.TlsFileException {
    this.cert = settings.certFile().orElseThrow();
    this.key = settings.keyFile().orElseThrow();
    this.clientCa = settings.clientCaFile();
    this.checkEveryNanos = settings.checkFilesEvery().toNanos();
    this.nanoTime = nanoTime;
    this.stamps = stamps();
    this.context = load();
    this.checkedAt = nanoTime.getAsLong();
  }

  /**
   * The server TLS of {@code settings} (which must have a certificate), its files loaded now:
   * a file that cannot be used fails the start, naming it.
   */
  public static ServerTls load(TlsSettings settings) throws PemFiles.TlsFileException {
    return load(settings, System::nanoTime);
  }

  static ServerTls load(TlsSettings settings, LongSupplier nanoTime) throws PemFiles.TlsFileException {
    return new ServerTls(settings, nanoTime);
  }

  /** For Pekko HTTP's {@code enableHttps}: every connection gets {@link #newEngine()}. */
  public HttpsConnectionContext connectionContext() {
    return ConnectionContext.httpsServer(this::newEngine);
  }

  /** A server engine of the current certificate, after a look at the files if one is due. */
  public SSLEngine newEngine() {
    reloadIfChanged();
    SSLEngine engine = context.createSSLEngine();
    engine.setUseClientMode(false);
    SSLParameters parameters = engine.getSSLParameters();
    parameters.setProtocols(PROTOCOLS);
    if (clientCa.isPresent()) {
      parameters.setWantClientAuth(true);
    }
    engine.setSSLParameters(parameters);
    return engine;
  }

  /** The certificate chain served to new connections now (its first is the node's). */
  SSLContext current() {
    return context;
  }

  private synchronized void reloadIfChanged() {
    long now = nanoTime.getAsLong();
    if (now - checkedAt < checkEveryNanos) {
      return;
    }
    checkedAt = now;
    List<Object> seen = stamps();
    if (seen.equals(stamps)) {
      return;
    }
    stamps = seen;
    try {
      context = load();
      LOG.info("TLS: loaded the changed certificate files ({}, {}{}) for new connections", cert, key,
          clientCa.map(ca -> ", " + ca).orElse(""));
    } catch (PemFiles.TlsFileException e) {
      LOG.warn("TLS: a certificate file changed but cannot be used, so new connections keep the previous"
          + " certificate until the files change again: {}", e.getMessage());
    }
  }

  private SSLContext load() throws PemFiles.TlsFileException {
    return PemFiles.context(cert, key, clientCa.orElse(null));
  }

  /** Each file's size and modification time, or its absence: what a rotation changes. */
  private List<Object> stamps() {
    List<Object> out = new ArrayList<>();
    for (Path p : clientCa.isPresent() ? List.of(cert, key, clientCa.get()) : List.of(cert, key)) {
      try {
        FileTime modified = Files.getLastModifiedTime(p);
        out.add(List.of(modified, Files.size(p)));
      } catch (IOException e) {
        out.add(Objects.toString(e.getClass().getSimpleName()));
      }
    }
    return out;
  }
}
