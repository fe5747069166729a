package io.tabula.client;

import io.grpc.Status;

/**
 * An operation of the Tabula client that failed: carries the gRPC status code the server
 * (or the client itself, for a deadline or a closed client) answered with, and whether
 * the client would consider the failure worth another attempt.
 */
public final class TabulaException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;

  public TabulaException(Status.Code code, String message, Throwable cause) {
    super(code + ": " + message, cause);
    this.code = code;
  }

  public TabulaException(Status.Code code, String message) {
    this(code, message, null);
  }

  /** The gRPC status code, e.g. NOT_FOUND for an unknown table. */
  public Status.Code code() {
    return code;
  }

  /** True for the codes a retry may cure: UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED. */
  public boolean isRetryable() {
    return code == Status.Code.UNAVAILABLE || code == Status.Code.ABORTED || code == Status.Code.DEADLINE_EXCEEDED
        || code == Status.Code.RESOURCE_EXHAUSTED;
  }
}
