package io.tabula.cluster.grpc;

import io.grpc.Status;
import io.tabula.actors.ErrorCode;
import io.tabula.actors.Replies;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.NotUsed;
import org.apache.pekko.grpc.GrpcServiceException;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.javadsl.Source;

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

  /**
   * Runs a unary handler: a request it rejects while checking (a thrown exception) and a
   * failure of the stage it returns both end as the gRPC error for that failure.
   */
  static <T> CompletionStage<T> unary(Supplier<CompletionStage<T>> handler) {
    CompletionStage<T> result;
    try {
      result = handler.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(from(e));
    }
    return result.exceptionally(e -> {
      throw from(e);
    });
  }

  /** The same for a handler that answers with a stream. */
  static <T> Source<T, NotUsed> streaming(Supplier<Source<T, NotUsed>> handler) {
    Source<T, NotUsed> result;
    try {
      result = handler.get();
    } catch (RuntimeException e) {
      return Source.failed(from(e));
    }
    return result.mapError(new PFBuilder<Throwable, Throwable>().match(Throwable.class, GrpcErrors::from).build());
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
