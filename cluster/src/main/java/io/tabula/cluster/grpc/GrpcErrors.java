package io.tabula.cluster.grpc;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.tabula.actors.RateLimitedLog;
import io.tabula.actors.Refusals;
import io.tabula.persistence.model.InvalidMutationException;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.ErrorDetails;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.WireNames;
import io.tabula.streams.filter.FilterTooSlowException;
import io.tabula.streams.filter.InvalidFilterException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.grpc.GrpcServiceException;
import org.apache.pekko.grpc.Trailers;
import org.apache.pekko.grpc.internal.MissingParameterException;
import org.apache.pekko.grpc.javadsl.MetadataBuilder;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.http.scaladsl.model.http2.PeerClosedStreamException;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.javadsl.Source;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns failures into gRPC statuses: the one place that maps Tabula's refusals to what a
 * client receives. Every error status carries the rich error details Cloud Bigtable sends
 * ({@link ErrorDetails}: the reason, a retry delay for retryable ones, the field of a bad
 * request) in the {@value WireNames#STATUS_DETAILS_TRAILER} trailer, so clients decide by
 * code and reason, never by text.
 *
 * <p>What is logged where: a bad request is the client's mistake and is not logged (a
 * message that does not even parse gets one rate-limited WARN line); a failure of the node
 * is logged once, with its stack, where {@link Refusals} first turns it into an answer.
 * Thread-safe.
 */
final class GrpcErrors {
  private static final Logger LOG = LoggerFactory.getLogger(GrpcErrors.class);
  private static final RateLimitedLog MALFORMED = new RateLimitedLog(LOG, Duration.ofSeconds(10));
  private static final Duration MOVED_RETRY = Duration.ofMillis(20);
  private static final Duration UNAVAILABLE_RETRY = Duration.ofMillis(200);
  private static final Duration EXHAUSTED_RETRY = Duration.ofSeconds(1);

  private GrpcErrors() {}

  /** INVALID_ARGUMENT naming {@code field}: {@code "field: problem"}. */
  static GrpcServiceException invalid(String field, String problem) {
    return status(ErrorCode.INVALID_ARGUMENT, field + ": " + problem, field);
  }

  /** A limit on a request's size or cost was exceeded: RESOURCE_EXHAUSTED naming {@code field}. */
  static GrpcServiceException exhausted(String field, String problem) {
    return status(ErrorCode.RESOURCE_EXHAUSTED, field + ": " + problem, field);
  }

  static GrpcServiceException notFound(String message) {
    return status(ErrorCode.NOT_FOUND, message, null);
  }

  static GrpcServiceException unimplemented(String rpc) {
    return new GrpcServiceException(Status.UNIMPLEMENTED.withDescription(rpc + " is not implemented by Tabula"));
  }

  /** The status of a refusal, with its details. */
  static GrpcServiceException of(Refusal r) {
    return status(r.code(), r.message(), null);
  }

  /**
   * The status for {@code code} with {@code message} and the details: the reason, a retry
   * delay where a retry may help, the field of a bad request; a stale route also gets its
   * trailer.
   */
  static GrpcServiceException status(ErrorCode code, String message, String field) {
    Duration retry = switch (code) {
      case MOVED -> MOVED_RETRY;
      case UNAVAILABLE -> UNAVAILABLE_RETRY;
      case RESOURCE_EXHAUSTED -> EXHAUSTED_RETRY;
      default -> null;
    };
    MetadataBuilder trailers = new MetadataBuilder().addBinary(WireNames.STATUS_DETAILS_TRAILER,
        org.apache.pekko.util.ByteString.fromArrayUnsafe(ErrorDetails.of(code, message, field, retry).toByteArray()));
    if (code == ErrorCode.STALE_ROUTE) {
      trailers.addText(WireNames.STALE_ROUTE_TRAILER, "1");
    }
    return new GrpcServiceException(Status.fromCode(code.grpcCode()).withDescription(message), trailers.build());
  }

  /** The {@code google.rpc.Status} a status exception stands for, with its details (MutateRows entries carry these). */
  static com.google.rpc.Status details(GrpcServiceException g) {
    return g.getMetadata().getBinary(WireNames.STATUS_DETAILS_TRAILER)
        .flatMap(b -> ErrorDetails.parse(b.toArray()))
        .orElseGet(() -> com.google.rpc.Status.newBuilder().setCode(g.getStatus().getCode().value())
            .setMessage(g.getStatus().getDescription() == null ? "" : g.getStatus().getDescription()).build());
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

  /** The gRPC exception for any failure of a check, an ask or a stream (already-mapped ones pass through). */
  static GrpcServiceException from(Throwable t) {
    Throwable e = Refusal.unwrap(t);
    if (e instanceof GrpcServiceException g) {
      return g;
    }
    if (e instanceof InvalidFilterException f) {
      return invalid(f.field(), f.problem());
    }
    if (e instanceof FilterTooSlowException s) {
      return status(ErrorCode.RESOURCE_EXHAUSTED, s.getMessage(), s.field());
    }
    if (e instanceof InvalidMutationException m && !m.isUnknownFamily()) {
      return status(ErrorCode.INVALID_ARGUMENT, m.getMessage(), m.field());
    }
    if (e instanceof InvalidProtocolBufferException p) {
      return malformed("request", p);
    }
    if (e instanceof EntityStreamSizeException) {
      return exhausted("request", "larger than the node takes for one request");
    }
    if (e instanceof MissingParameterException) {
      return invalid("request", "no message was sent; this method takes exactly one");
    }
    if (e instanceof PeerClosedStreamException) {
      // The client reset the stream: nobody is left to read this status, and nothing went wrong here.
      return new GrpcServiceException(Status.CANCELLED.withDescription("the client cancelled the call"));
    }
    return of(Refusals.of(e));
  }

  /**
   * INVALID_ARGUMENT for bytes that are not the message the method takes (protobuf's own
   * words say what is wrong with them); one rate-limited WARN line for the operator.
   */
  static GrpcServiceException malformed(String field, InvalidProtocolBufferException p) {
    MALFORMED.warn("a client sent a request that is not a valid message: " + p.getMessage(), null);
    return invalid(field, "not a valid message: " + p.getMessage());
  }

  /**
   * The status and trailers of any failure, for Pekko gRPC's generated handlers (a request
   * that does not parse, a failed stage, a failed stream): never its default, which logs
   * client mistakes as errors and answers INTERNAL.
   */
  static Trailers trailers(Throwable failure) {
    GrpcServiceException g = from(failure);
    return new Trailers(g.getStatus(), g.getMetadata());
  }

  /** {@link #trailers} in the shape the generated handler factories take. */
  static org.apache.pekko.japi.Function<ActorSystem, org.apache.pekko.japi.Function<Throwable, Trailers>> handler() {
    return system -> GrpcErrors::trailers;
  }
}
