package io.tabula.client;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.ErrorDetails;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.WireNames;
import java.io.IOException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

/**
 * Turns whatever a gRPC call failed with into a {@link TabulaException}, reading what the
 * client decides on from types, status codes and the status details, never from text:
 * Tabula's reason and the suggested retry delay from the
 * {@value WireNames#STATUS_DETAILS_TRAILER} trailer ({@link ErrorDetails}), a stale route
 * from that reason or the {@value WireNames#STALE_ROUTE_TRAILER} trailer, and a node that
 * could not be reached, or whose TLS certificate was not trusted, from the exception types.
 * Stateless.
 */
final class Failures {
  private static final Metadata.Key<String> STALE_ROUTE = Metadata.Key.of(WireNames.STALE_ROUTE_TRAILER,
      Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<byte[]> DETAILS = Metadata.Key.of(WireNames.STATUS_DETAILS_TRAILER,
      Metadata.BINARY_BYTE_MARSHALLER);

  private Failures() {}

  static TabulaException of(Throwable t) {
    Throwable e = Refusal.unwrap(t);
    if (e instanceof TabulaException te) {
      return te;
    }
    if (e instanceof StatusRuntimeException s) {
      return fromStatus(s);
    }
    if (e instanceof TimeoutException) {
      return new TabulaException(Status.Code.DEADLINE_EXCEEDED, "no answer in time: " + e.getMessage(), e);
    }
    if (e instanceof org.apache.pekko.grpc.internal.ClientConnectionException) {
      return new TabulaException(Status.Code.UNAVAILABLE, "cannot connect: " + e.getMessage(), e, null, null,
          TabulaException.Contact.UNREACHABLE);
    }
    if (e instanceof org.apache.pekko.grpc.internal.ClientClosedException
        || e instanceof org.apache.pekko.grpc.GrpcClientCloseException) {
      return new TabulaException(Status.Code.CANCELLED, "the client is closed", e);
    }
    if (e instanceof IllegalArgumentException || e instanceof IllegalStateException) {
      return new TabulaException(Status.Code.INVALID_ARGUMENT, e.getMessage(), e);
    }
    return new TabulaException(Status.Code.UNKNOWN, String.valueOf(e), e);
  }

  /** The failure of one entry of a MutateRows answer, with the reason and delay its status details carry. */
  static TabulaException ofEntry(com.google.rpc.Status status) {
    String description = status.getMessage().isEmpty() ? Status.fromCodeValue(status.getCode()).getCode().name()
        : status.getMessage();
    return new TabulaException(Status.fromCodeValue(status.getCode()).getCode(), description, null,
        ErrorDetails.reason(status).orElse(null), ErrorDetails.retryDelay(status).orElse(null),
        TabulaException.Contact.ANSWERED);
  }

  /** True if the node answered that the tablet the request named is not where the row is: nothing was applied. */
  static boolean isStaleRoute(Throwable t) {
    return of(t).reason().orElse(null) == ErrorCode.STALE_ROUTE;
  }

  private static TabulaException fromStatus(StatusRuntimeException s) {
    Status st = s.getStatus();
    String description = st.getDescription() == null ? st.getCode().name() : st.getDescription();
    Metadata trailers = s.getTrailers();
    Optional<com.google.rpc.Status> details = Optional.empty();
    if (trailers != null && trailers.containsKey(DETAILS)) {
      details = ErrorDetails.parse(trailers.get(DETAILS));
    }
    ErrorCode reason = details.flatMap(ErrorDetails::reason).orElse(null);
    if (reason == null && st.getCode() == Status.Code.FAILED_PRECONDITION && trailers != null
        && trailers.containsKey(STALE_ROUTE)) {
      reason = ErrorCode.STALE_ROUTE;
    }
    Duration delay = details.flatMap(ErrorDetails::retryDelay).orElse(null);
    Optional<CertificateException> rejected = rejectedCertificate(s);
    if (rejected.isPresent()) {
      return new TabulaException(st.getCode(), "the node's TLS certificate was not accepted ("
          + rejected.get().getMessage() + "): the client accepts a certificate signed by the CA it was given"
          + " (tls(...), --tls-ca) that names the host it connects to", s, null, null,
          TabulaException.Contact.CERTIFICATE_REJECTED);
    }
    if (st.getCode() == Status.Code.UNKNOWN && ioCause(s)) {
      // grpc-java's transport, not the node: the connection closed under the call as it
      // started (UNKNOWN "channel closed" with a ClosedChannelException). A node never
      // answers UNKNOWN, so this is a lost connection like any other.
      return new TabulaException(Status.Code.UNAVAILABLE, "connection lost: " + description, s, reason, delay,
          TabulaException.Contact.UNREACHABLE);
    }
    return new TabulaException(st.getCode(), description, s, reason, delay, unreachable(s)
        ? TabulaException.Contact.UNREACHABLE : TabulaException.Contact.ANSWERED);
  }

  /**
   * The reason the TLS handshake gave for not trusting the node's certificate, if that is
   * why the call failed: the JDK's certificate check fails the handshake with a {@code
   * CertificateException} among the causes (no path to a trusted CA, a name that does not
   * match, an expired certificate), which a retry would meet again.
   */
  private static Optional<CertificateException> rejectedCertificate(StatusRuntimeException s) {
    if (s.getStatus().getCode() != Status.Code.UNAVAILABLE) {
      return Optional.empty();
    }
    for (Throwable c = s.getCause(); c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof CertificateException ce) {
        return Optional.of(ce);
      }
    }
    return Optional.empty();
  }

  /**
   * True if the call failed for want of a connection: gRPC answers UNAVAILABLE and gives the
   * I/O failure as the cause (a refused connection, an unresolved host, a connection lost).
   * A node that answered UNAVAILABLE itself (shutting down, storage failing) sends no such
   * cause.
   */
  private static boolean unreachable(StatusRuntimeException s) {
    return s.getStatus().getCode() == Status.Code.UNAVAILABLE && ioCause(s);
  }

  /** True if an I/O failure of the connection is among the causes of {@code s}. */
  private static boolean ioCause(StatusRuntimeException s) {
    for (Throwable c = s.getCause(); c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof IOException || c instanceof org.apache.pekko.grpc.internal.ClientConnectionException) {
        return true;
      }
    }
    return false;
  }
}
