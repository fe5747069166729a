package io.tabula.client;

import io.grpc.CallCredentials;
import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import javax.net.ssl.X509TrustManager;

/**
 * What every channel of a client to any node is opened with, the seed's and those the
 * Locations service names alike ({@link Endpoint#open}): TLS trusting {@code trust}, or
 * plaintext when it is null; and the call credentials every call carries ({@link
 * TokenCredentials}), or none when null. Immutable.
 */
record ChannelSecurity(X509TrustManager trust, CallCredentials credentials) {
  /** No TLS and no token: the channels as they were before TLS. */
  static final ChannelSecurity PLAINTEXT = new ChannelSecurity(null, null);

  boolean tls() {
    return trust != null;
  }

  /** The credentials of a grpc-java channel with TLS; requires {@link #tls()}. */
  ChannelCredentials channelCredentials() {
    return TlsChannelCredentials.newBuilder().trustManager(trust).build();
  }

  /** The options every call starts from: the token's credentials on them, if any. */
  CallOptions callOptions() {
    return credentials == null ? CallOptions.DEFAULT : CallOptions.DEFAULT.withCallCredentials(credentials);
  }
}
