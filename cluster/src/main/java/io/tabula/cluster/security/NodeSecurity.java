package io.tabula.cluster.security;

import com.google.iam.v1.Policy;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.security.GeneralSecurityException;
import javax.net.ssl.SSLContext;
import org.apache.pekko.grpc.GrpcClientSettings;

/**
 * A node's security, read once at its start: TLS for its ports ({@code tabula.node.tls}), the
 * {@link Guard} in front of its services (authentication and the instance's policy, from
 * {@code tabula.security} and the file {@code tabula.security.auth-file} names, {@code
 * --auth}), the remoting settings that make the cluster's certificate what makes a member, and
 * how the node calls other members' Management HTTP ({@link PeerHttp}). Immutable (the files
 * {@link ServerTls} and {@link PeerHttp} read are read again as they rotate).
 */
public final class NodeSecurity {
  private final TlsSettings tls;
  private final Optional<ServerTls> serverTls;
  private final PeerHttp peerHttp;
  private final Guard guard;
  private final boolean insecure;

  private NodeSecurity(TlsSettings tls, Optional<ServerTls> serverTls, PeerHttp peerHttp, Guard guard,
      boolean insecure) {
    this.tls = tls;
    this.serverTls = serverTls;
    this.peerHttp = peerHttp;
    this.guard = guard;
    this.insecure = insecure;
  }

  /**
   * The security of a node configured by {@code config} (the whole configuration). Throws
   * {@link IllegalArgumentException} naming the key or file for a setting or file that
   * cannot be used.
   */
  public static NodeSecurity from(Config config) {
    TlsSettings tls = TlsSettings.from(config.getConfig("tabula.node.tls"));
    Optional<ServerTls> serverTls = Optional.empty();
    PeerHttp peerHttp;
    try {
      if (tls.enabled()) {
        serverTls = Optional.of(ServerTls.load(tls));
      }
      peerHttp = PeerHttp.of(tls);
    } catch (PemFiles.TlsFileException e) {
      throw new IllegalArgumentException("tabula.node.tls: " + e.getMessage(), e);
    }
    Config security = security(config);
    boolean certificates = tls.clientCaFile().isPresent();
    Guard guard;
    if (authenticates(security)) {
      Authenticator authenticator = Authenticator.from(AuthSettings.from(security, baseDir(config)),
          Clock.systemUTC());
      guard = Guard.of(Optional.of(authenticator), certificates, AccessPolicy.instance(security));
    } else if (certificates) {
      guard = Guard.of(Optional.empty(), true, AccessPolicy.instance(security));
    } else {
      guard = Guard.open();
    }
    return new NodeSecurity(tls, serverTls, peerHttp, guard, config.getBoolean("tabula.node.insecure"));
  }

  /**
   * {@code tabula.security} with the auth file's {@code tabula.security} over it, when
   * {@code auth-file} names one.
   */
  static Config security(Config config) {
    Config inline = config.getConfig("tabula.security");
    String file = inline.getString("auth-file").trim();
    if (file.isEmpty()) {
      return inline;
    }
    Path path = Path.of(file).toAbsolutePath();
    if (!Files.isRegularFile(path)) {
      throw new IllegalArgumentException("tabula.security.auth-file (--auth): no such file: " + path);
    }
    Config parsed;
    try {
      parsed = ConfigFactory.parseFile(path.toFile()).resolve();
    } catch (ConfigException e) {
      throw new IllegalArgumentException("tabula.security.auth-file (--auth) " + path + ": " + e.getMessage(), e);
    }
    if (!parsed.hasPath("tabula.security")) {
      throw new IllegalArgumentException("tabula.security.auth-file (--auth) " + path + " has no tabula.security"
          + " section (write tabula.security { tokens = [...], admins = [...] })");
    }
    return parsed.getConfig("tabula.security").withFallback(inline);
  }

  /** Where relative file names in the security settings are taken from: the auth file's folder, or the working directory. */
  private static Path baseDir(Config config) {
    String file = config.getString("tabula.security.auth-file").trim();
    Path parent = file.isEmpty() ? null : Path.of(file).toAbsolutePath().getParent();
    return parent == null ? Path.of("").toAbsolutePath() : parent;
  }

  /** Whether {@code security} configures any way to authenticate a bearer token. */
  private static boolean authenticates(Config security) {
    return nonEmpty(security, "tokens") || nonEmpty(security, "jwt.issuers") || nonEmpty(security, "service-accounts");
  }

  private static boolean nonEmpty(Config c, String key) {
    return c.hasPath(key) && !c.getList(key).isEmpty();
  }

  public TlsSettings tls() {
    return tls;
  }

  /** The TLS of the gRPC port and Management HTTP; empty when the node has none. */
  public Optional<ServerTls> serverTls() {
    return serverTls;
  }

  /** How the node calls other members' Management HTTP: HTTPS trusting the cluster's CA when it has TLS. */
  public PeerHttp peerHttp() {
    return peerHttp;
  }

  public Guard guard() {
    return guard;
  }

  /** Whether the operator accepted a node exposed without TLS or authentication ({@code --insecure}). */
  public boolean insecure() {
    return insecure;
  }

  /** The settings the node's actor system takes from its security: {@link #remotingSettings} and {@link #httpSettings}. */
  public Map<String, Object> derivedSettings() {
    Map<String, Object> out = new HashMap<>(remotingSettings());
    out.putAll(httpSettings());
    return out;
  }

  /**
   * The remoting settings of a node with TLS: Artery over TLS ({@code tls-tcp}) with Pekko's
   * rotating-keys engine, which requires a peer's certificate to chain to the cluster's CA
   * (the node's own certificate when no {@code cluster-ca-file} is set) both ways, and reloads
   * the files as they rotate. Empty for a node without TLS.
   */
  public Map<String, Object> remotingSettings() {
    Map<String, Object> out = new HashMap<>();
    if (!tls.enabled()) {
      return out;
    }
    String engine = "pekko.remote.artery.ssl.rotating-keys-engine.";
    out.put("pekko.remote.artery.transport", "tls-tcp");
    out.put("pekko.remote.artery.ssl.ssl-engine-provider",
        "org.apache.pekko.remote.artery.tcp.ssl.RotatingKeysSSLEngineProvider");
    out.put(engine + "cert-file", tls.certFile().orElseThrow().toString());
    out.put(engine + "key-file", tls.keyFile().orElseThrow().toString());
    out.put(engine + "ca-cert-file", tls.clusterCaFile().orElse(tls.certFile().orElseThrow()).toString());
    out.put(engine + "ssl-context-cache-ttl", tls.checkFilesEvery().toMillis() + "ms");
    return out;
  }

  /**
   * A client TLS context trusting the cluster's certificates (its CA, or the node's own
   * certificate), for this node's HTTPS requests to the others; requires TLS.
   */
  public SSLContext clusterClientContext() {
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, PemFiles.trusting(tls.clusterCaFile().orElse(tls.certFile().orElseThrow())), null);
      return context;
    } catch (PemFiles.TlsFileException e) {
      throw new IllegalArgumentException("tabula.node.tls: " + e.getMessage(), e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK has no TLS: " + e.getMessage(), e);
    }
  }

  /**
   * {@code settings} of a client of this node's own endpoint over loopback (its warm-up): TLS
   * trusting the node's certificate, named as the certificate names it, and the node's own
   * token ({@link Guard#internalToken}). As they are for a node without TLS or authentication.
   */
  public GrpcClientSettings ownClient(GrpcClientSettings settings) {
    GrpcClientSettings out = settings.withTls(false);
    if (tls.enabled()) {
      try {
        SSLContext trust = SSLContext.getInstance("TLS");
        trust.init(null, PemFiles.trusting(tls.certFile().orElseThrow()), null);
        out = settings.withTls(true).withSslContext(trust).withOverrideAuthority(
            PemFiles.firstName(tls.certFile().orElseThrow()));
      } catch (PemFiles.TlsFileException e) {
        throw new IllegalArgumentException("tabula.node.tls: " + e.getMessage(), e);
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("the JDK has no TLS: " + e.getMessage(), e);
      }
    }
    return guard.authenticates() ? out.withCallCredentials(new BearerCredentials(guard.internalToken())) : out;
  }

  /** Pekko HTTP settings a node with client certificates needs: the TLS session of each request, to read its peer. */
  public Map<String, Object> httpSettings() {
    return tls.clientCaFile().isPresent() ? Map.of("pekko.http.server.parsing.ssl-session-attribute", "on")
        : Map.of();
  }
}
