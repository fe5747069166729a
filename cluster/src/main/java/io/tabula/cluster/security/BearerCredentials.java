package io.tabula.cluster.security;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import java.util.concurrent.Executor;

/** gRPC call credentials that send {@code authorization: Bearer <token>} with every call. Immutable. */
public final class BearerCredentials extends CallCredentials {
  private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
      Metadata.ASCII_STRING_MARSHALLER);
  private final Metadata headers = new Metadata();

  public BearerCredentials(String token) {
    headers.put(AUTHORIZATION, "Bearer " + token);
  }

  @Override
  public void applyRequestMetadata(RequestInfo info, Executor appExecutor, MetadataApplier applier) {
    Metadata copy = new Metadata();
    copy.merge(headers);
    applier.apply(copy);
  }
}
