package io.tabula.bench.e2e;

import com.google.api.gax.core.CredentialsProvider;
import com.google.api.gax.core.FixedCredentialsProvider;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.stub.EnhancedBigtableStubSettings;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.time.Instant;
import java.util.Date;
import java.util.Optional;

/**
 * How Google's official Java client reaches a server on 127.0.0.1, in one of three ways, none
 * of which reaches Google (metrics exporters off, no DirectPath):
 *
 * <ul>
 *   <li>{@link #emulator}: as an emulator's user sets it up ({@code newBuilderForEmulator}):
 *       plaintext, no credentials, and the client's emulator behaviour (it stamps cells in
 *       milliseconds);
 *   <li>{@link #plaintext}: the client's production settings, as a Cloud Bigtable user runs
 *       them (it stamps microseconds and says so in {@code bigtable-features}; the node
 *       truncates them), over a plaintext channel without credentials;
 *   <li>{@link #secure}: the same production settings over TLS, trusting the node's CA, with
 *       a static bearer token, as docs/security.md connects the client.
 * </ul>
 *
 * <p>{@code plaintext} and {@code secure} differ only in the channel's transport security and in
 * the credentials, so the difference between them is what TLS and authentication cost. Both
 * use one connection, as the channel provider's default pool has; callers may widen it.
 *
 * @param security the CA to trust and the token to send, for {@link #secure} only
 */
record OfficialEndpoint(int port, Kind kind, Optional<NodeSecurityFiles> security) {
  static final String PROJECT = "tabula";
  static final String INSTANCE = "tabula";
  private static final String HOST = "127.0.0.1";
  /** When the static token "expires" for the client's credentials: never within a run. */
  private static final Date TOKEN_EXPIRY = Date.from(Instant.parse("2100-01-01T00:00:00Z"));

  enum Kind { EMULATOR, PLAINTEXT, SECURE }

  OfficialEndpoint {
    if (security.isPresent() != (kind == Kind.SECURE)) {
      throw new IllegalArgumentException("the CA and the token are for a secure endpoint only");
    }
  }

  static OfficialEndpoint emulator(int port) {
    return new OfficialEndpoint(port, Kind.EMULATOR, Optional.empty());
  }

  static OfficialEndpoint plaintext(int port) {
    return new OfficialEndpoint(port, Kind.PLAINTEXT, Optional.empty());
  }

  static OfficialEndpoint secure(int port, NodeSecurityFiles security) {
    return new OfficialEndpoint(port, Kind.SECURE, Optional.of(security));
  }

  /** The data client's settings. */
  @SuppressWarnings("deprecation") // disableInternalMetrics: the client would otherwise export to Cloud Monitoring
  BigtableDataSettings.Builder dataSettings() throws IOException {
    if (kind == Kind.EMULATOR) {
      return BigtableDataSettings.newBuilderForEmulator(HOST, port)
          .setProjectId(PROJECT)
          .setInstanceId(INSTANCE)
          .setMetricsProvider(NoopMetricsProvider.INSTANCE)
          .disableInternalMetrics();
    }
    BigtableDataSettings.Builder b = BigtableDataSettings.newBuilder()
        .setProjectId(PROJECT)
        .setInstanceId(INSTANCE)
        .setCredentialsProvider(credentials())
        .setMetricsProvider(NoopMetricsProvider.INSTANCE)
        .disableInternalMetrics();
    b.stubSettings()
        .setEndpoint(HOST + ":" + port)
        .setTransportChannelProvider(channel())
        .setDirectPathConfig(EnhancedBigtableStubSettings.DirectPathConfig.FORCED_OFF)
        .setSessionsEnabled(false)
        .setRefreshingChannel(false);
    return b;
  }

  /** The table-admin client, with the same channel and credentials as the data client. */
  BigtableTableAdminClient admin() throws IOException {
    if (kind == Kind.EMULATOR) {
      return BigtableTableAdminClient.create(BigtableTableAdminSettings.newBuilderForEmulator(HOST, port)
          .setProjectId(PROJECT)
          .setInstanceId(INSTANCE)
          .build());
    }
    BigtableTableAdminSettings.Builder b = BigtableTableAdminSettings.newBuilder()
        .setProjectId(PROJECT)
        .setInstanceId(INSTANCE);
    b.stubSettings()
        .setEndpoint(HOST + ":" + port)
        .setTransportChannelProvider(channel())
        .setCredentialsProvider(credentials());
    return BigtableTableAdminClient.create(b.build());
  }

  /** For the results: how the client connects. */
  String describe() {
    return switch (kind) {
      case EMULATOR -> "`newBuilderForEmulator`";
      case PLAINTEXT -> "production settings, plaintext, no credentials";
      case SECURE -> "production settings, TLS trusting the node's CA, a static bearer token";
    };
  }

  private InstantiatingGrpcChannelProvider channel() throws IOException {
    if (security.isEmpty()) {
      return InstantiatingGrpcChannelProvider.newBuilder().setChannelConfigurator(b -> b.usePlaintext()).build();
    }
    SslContext ssl = GrpcSslContexts.forClient().trustManager(security.get().ca().toFile()).build();
    return InstantiatingGrpcChannelProvider.newBuilder()
        .setChannelConfigurator(b -> ((NettyChannelBuilder) b).sslContext(ssl))
        .build();
  }

  private CredentialsProvider credentials() {
    if (security.isEmpty()) {
      return NoCredentialsProvider.create();
    }
    return FixedCredentialsProvider.create(GoogleCredentials.create(new AccessToken(security.get().token(),
        TOKEN_EXPIRY)));
  }
}
