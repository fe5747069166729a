package io.tabula.client;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/** Turns whatever a gRPC call failed with into a {@link TabulaException}, and spots stale-route answers. */
final class Failures {
  /** The trailer a node adds when a request names a tablet it no longer holds the row in. */
  static final Metadata.Key<String> STALE_ROUTE = Metadata.Key.of("tabula-stale-route",
      Metadata.ASCII_STRING_MARSHALLER);

  private Failures() {}

  static TabulaException of(Throwable t) {
    Throwable e = unwrap(t);
    if (e instanceof TabulaException te) {
      return te;
    }
    if (e instanceof StatusRuntimeException s) {
      Status st = s.getStatus();
      String description = st.getDescription() == null ? st.getCode().name() : st.getDescription();
      return new TabulaException(st.getCode(), description, s);
    }
    if (e instanceof TimeoutException) {
      return new TabulaException(Status.Code.DEADLINE_EXCEEDED, "no answer in time: " + e.getMessage(), e);
    }
    if (e instanceof org.apache.pekko.grpc.internal.ClientConnectionException) {
      return new TabulaException(Status.Code.UNAVAILABLE, "cannot connect: " + e.getMessage(), e);
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

  /** True if the node answered that the tablet the request named is not where the row is. */
  static boolean isStaleRoute(Throwable t) {
    Throwable e = unwrap(t);
    if (e instanceof TabulaException te && te.getCause() != null) {
      e = te.getCause();
    }
    if (!(e instanceof StatusRuntimeException s) || s.getStatus().getCode() != Status.Code.FAILED_PRECONDITION) {
      return false;
    }
    Metadata trailers = s.getTrailers();
    if (trailers != null && trailers.containsKey(STALE_ROUTE)) {
      return true;
    }
    String d = s.getStatus().getDescription();
    return d != null && d.startsWith("stale route");
  }

  static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
