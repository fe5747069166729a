package io.tabula.client;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import java.util.concurrent.Executor;

/**
 * Puts {@code authorization: Bearer <token>} on every call of a channel, but only where it
 * cannot be read on the way: over TLS, or to a loopback address (a node on the same
 * machine, as in development). Any other call fails UNAUTHENTICATED before it is sent, as
 * grpc-java's own Google credentials do, so a client given a token but no {@code tls(...)}
 * never sends it in plaintext to a node it learns of elsewhere. Thread-safe (immutable).
 */
final class TokenCredentials extends CallCredentials {
  private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
      Metadata.ASCII_STRING_MARSHALLER);

  /** The header, made once: grpc-java merges it into each call's headers without changing it. */
  private final Metadata headers = new Metadata();

  TokenCredentials(BearerToken token) {
    headers.put(AUTHORIZATION, token.authorization());
  }

  @Override
  public void applyRequestMetadata(RequestInfo info, Executor appExecutor, MetadataApplier applier) {
    if (info.getSecurityLevel() == SecurityLevel.PRIVACY_AND_INTEGRITY
        || BearerToken.mayTravelInPlaintextTo(info.getAuthority())) {
      applier.apply(headers);
    } else {
      applier.fail(Status.UNAUTHENTICATED.withDescription("the client sends its token only over TLS or to a loopback"
          + " address, and the connection to " + info.getAuthority() + " is neither: give the client tls(...)"
          + " (--tls-ca)"));
    }
  }
}
