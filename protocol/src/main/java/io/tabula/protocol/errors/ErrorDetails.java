package io.tabula.protocol.errors;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import java.time.Duration;
import java.util.Optional;

/**
 * The rich error details a node sends with an error status, in gRPC's
 * {@value WireNames#STATUS_DETAILS_TRAILER} trailer, as Cloud Bigtable does: a
 * {@code google.rpc.Status} with the same code and message whose details hold
 *
 * <ul>
 *   <li>always a {@code google.rpc.ErrorInfo} with domain {@value #DOMAIN} and the
 *       {@link ErrorCode} name as its reason;
 *   <li>for a retryable refusal, a {@code google.rpc.RetryInfo} with the delay the node
 *       suggests before the next attempt;
 *   <li>for a bad request, a {@code google.rpc.BadRequest} with the offending field.
 * </ul>
 *
 * <p>Clients decide from the status code and these details, never from the message text.
 * Stateless.
 */
public final class ErrorDetails {
  /** The ErrorInfo domain of every reason Tabula sends. */
  public static final String DOMAIN = "tabula.io";

  private ErrorDetails() {}

  /**
   * The details of a refusal.
   *
   * @param field the request field at fault (for INVALID_ARGUMENT), or null
   * @param retryDelay the suggested wait before retrying, or null for none
   */
  public static com.google.rpc.Status of(ErrorCode code, String message, String field, Duration retryDelay) {
    com.google.rpc.Status.Builder b = com.google.rpc.Status.newBuilder().setCode(code.grpcCode().value())
        .setMessage(message)
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason(code.name()).setDomain(DOMAIN).build()));
    if (retryDelay != null) {
      b.addDetails(Any.pack(RetryInfo.newBuilder().setRetryDelay(com.google.protobuf.Duration.newBuilder()
          .setSeconds(retryDelay.getSeconds()).setNanos(retryDelay.getNano())).build()));
    }
    if (field != null && !field.isEmpty()) {
      b.addDetails(Any.pack(BadRequest.newBuilder().addFieldViolations(BadRequest.FieldViolation.newBuilder()
          .setField(field).setDescription(message)).build()));
    }
    return b.build();
  }

  /** Tabula's reason in {@code details}, when it carries one this build knows. */
  public static Optional<ErrorCode> reason(com.google.rpc.Status details) {
    for (Any a : details.getDetailsList()) {
      if (a.is(ErrorInfo.class)) {
        try {
          ErrorInfo info = a.unpack(ErrorInfo.class);
          if (DOMAIN.equals(info.getDomain())) {
            for (ErrorCode c : ErrorCode.values()) {
              if (c.name().equals(info.getReason())) {
                return Optional.of(c);
              }
            }
          }
        } catch (InvalidProtocolBufferException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  /** The retry delay in {@code details}, when it suggests one. */
  public static Optional<Duration> retryDelay(com.google.rpc.Status details) {
    for (Any a : details.getDetailsList()) {
      if (a.is(RetryInfo.class)) {
        try {
          com.google.protobuf.Duration d = a.unpack(RetryInfo.class).getRetryDelay();
          return Optional.of(Duration.ofSeconds(d.getSeconds(), d.getNanos()));
        } catch (InvalidProtocolBufferException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  /** The details in a trailer's bytes, or empty when they do not parse. */
  public static Optional<com.google.rpc.Status> parse(byte[] trailer) {
    try {
      return Optional.of(com.google.rpc.Status.parseFrom(trailer));
    } catch (InvalidProtocolBufferException e) {
      return Optional.empty();
    }
  }
}
