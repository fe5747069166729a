package io.tabula.cluster.grpc;

import io.grpc.Status;
import io.tabula.actors.ErrorCode;
import io.tabula.actors.Replies;
import org.apache.pekko.grpc.GrpcServiceException;

/** Turns refusals into gRPC statuses: the one place that maps Tabula's codes to the client's. */
final class GrpcErrors {
  private GrpcErrors() {}

  static GrpcServiceException invalid(String field, String problem) {
    return new GrpcServiceException(Status.INVALID_ARGUMENT.withDescription(field + ": " + problem));
  }

  static GrpcServiceException of(Status status, String message) {
    return new GrpcServiceException(status.withDescription(message));
  }

  static GrpcServiceException unimplemented(String rpc) {
    return of(Status.UNIMPLEMENTED, rpc + " is not implemented by Tabula");
  }

  static Status status(ErrorCode code) {
    return switch (code) {
      case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
      case NOT_FOUND -> Status.NOT_FOUND;
      case ALREADY_EXISTS -> Status.ALREADY_EXISTS;
      case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
      case UNAVAILABLE, MOVED -> Status.UNAVAILABLE;
      case INTERNAL -> Status.INTERNAL;
    };
  }

  /** The gRPC exception for any failure of an ask or a stream (already-mapped ones pass through). */
  static RuntimeException from(Throwable t) {
    Throwable e = t;
    while (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    if (e instanceof GrpcServiceException g) {
      return g;
    }
    if (e instanceof io.tabula.streams.filter.InvalidFilterException f) {
      return of(Status.INVALID_ARGUMENT, f.getMessage());
    }
    Replies.Refusal r = Replies.parse(e);
    return of(status(r.code()), r.message());
  }
}
