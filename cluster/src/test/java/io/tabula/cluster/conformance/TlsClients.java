package io.tabula.cluster.conformance;

import com.google.api.gax.core.CredentialsProvider;
import com.google.api.gax.core.FixedCredentialsProvider;
import com.google.api.gax.grpc.ChannelPoolSettings;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.auth.oauth2.ServiceAccountCredentials;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.stub.EnhancedBigtableStubSettings;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

/**
 * Settings of the official Cloud Bigtable clients for a Tabula node that serves TLS with a
 * certificate of a private CA: the endpoint {@code 127.0.0.1:PORT} (which the node's
 * certificate names), a channel that trusts only that CA, and the credentials given. The
 * clients send credentials only over TLS (over plaintext they refuse to), so this is how they
 * call a node with authentication.
 *
 * <p>Apart from TLS and credentials the settings are those of {@code newBuilderForEmulator}:
 * one channel, 256 MiB inbound messages, the same keep-alive, and a data client that calls
 * nothing the scenarios do not ask for: no DirectPath, no sessions ({@code
 * GetClientConfiguration}), no channel priming ({@code PingAndWarm}). Deadlines and retries are
 * the caller's. Stateless.
 */
final class TlsClients {
  private static final int MAX_INBOUND_BYTES = 256 * 1024 * 1024;

  private TlsClients() {}

  /** The data client's settings for the node at {@code 127.0.0.1:port}, trusting {@code caPem}. */
  static BigtableDataSettings.Builder data(int port, Path caPem, CredentialsProvider credentials)
      throws IOException {
    BigtableDataSettings.Builder b = BigtableDataSettings.newBuilder()
        .setProjectId(ConformancePeer.PROJECT)
        .setInstanceId(ConformancePeer.INSTANCE)
        .setCredentialsProvider(credentials)
        .setMetricsProvider(NoopMetricsProvider.INSTANCE)
        .disableInternalMetrics();
    b.stubSettings()
        .setEndpoint(ConformancePeer.LOOPBACK + ":" + port)
        .setTransportChannelProvider(channel(caPem))
        .setDirectPathConfig(EnhancedBigtableStubSettings.DirectPathConfig.FORCED_OFF)
        .setSessionsEnabled(false)
        .setRefreshingChannel(false);
    return b;
  }

  /** The table-admin client's settings for the node at {@code 127.0.0.1:port}, trusting {@code caPem}. */
  static BigtableTableAdminSettings.Builder admin(int port, Path caPem, CredentialsProvider credentials)
      throws IOException {
    BigtableTableAdminSettings.Builder b = BigtableTableAdminSettings.newBuilder()
        .setProjectId(ConformancePeer.PROJECT)
        .setInstanceId(ConformancePeer.INSTANCE);
    b.stubSettings()
        .setEndpoint(ConformancePeer.LOOPBACK + ":" + port)
        .setTransportChannelProvider(channel(caPem))
        .setCredentialsProvider(credentials);
    return b;
  }

  /** The instance-admin client's settings for the node at {@code 127.0.0.1:port}, trusting {@code caPem}. */
  static com.google.cloud.bigtable.admin.v2.BigtableInstanceAdminSettings.Builder instanceAdmin(int port, Path caPem,
      CredentialsProvider credentials) throws IOException {
    com.google.cloud.bigtable.admin.v2.BigtableInstanceAdminSettings.Builder b =
        com.google.cloud.bigtable.admin.v2.BigtableInstanceAdminSettings.newBuilder()
            .setProjectId(ConformancePeer.PROJECT);
    b.stubSettings()
        .setEndpoint(ConformancePeer.LOOPBACK + ":" + port)
        .setTransportChannelProvider(channel(caPem))
        .setCredentialsProvider(credentials);
    return b;
  }

  /** A static bearer token, as {@code GoogleCredentials} with an access token that does not expire in a test's life. */
  static CredentialsProvider token(String token) {
    return FixedCredentialsProvider.create(GoogleCredentials.create(new AccessToken(token,
        Date.from(Instant.now().plus(Duration.ofDays(365))))));
  }

  /**
   * A Google service-account key file's own credentials: without scopes, grpc-java signs a JWT
   * with the key for each service it calls ({@code aud https://127.0.0.1:PORT/SERVICE}); no
   * token server is asked.
   */
  static CredentialsProvider serviceAccount(Path keyFile) throws IOException {
    try (InputStream json = Files.newInputStream(keyFile)) {
      return FixedCredentialsProvider.create(ServiceAccountCredentials.fromStream(json));
    }
  }

  private static InstantiatingGrpcChannelProvider channel(Path caPem) throws IOException {
    SslContext ssl = GrpcSslContexts.forClient().trustManager(caPem.toFile()).build();
    return InstantiatingGrpcChannelProvider.newBuilder()
        .setMaxInboundMessageSize(MAX_INBOUND_BYTES)
        .setChannelPoolSettings(ChannelPoolSettings.staticallySized(1))
        .setKeepAliveTimeDuration(Duration.ofSeconds(61))
        .setKeepAliveTimeoutDuration(Duration.ofSeconds(10))
        .setChannelConfigurator(builder -> ((NettyChannelBuilder) builder).sslContext(ssl))
        .build();
  }
}
