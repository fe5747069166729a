package io.tabula.protocol.errors;

import io.grpc.Status;

/**
 * Why Tabula refused a request: the vocabulary of {@link Refusal}s between actors and nodes,
 * and the {@code reason} of the {@code google.rpc.ErrorInfo} a node sends with every error
 * status ({@link ErrorDetails}). Each code has the one gRPC status code it is answered with.
 *
 * <p>Travels by name (Kryo writes enums by constant name), so constants may be added and
 * reordered but never renamed or reused for another meaning.
 */
public enum ErrorCode {
  INVALID_ARGUMENT(Status.Code.INVALID_ARGUMENT),
  NOT_FOUND(Status.Code.NOT_FOUND),
  ALREADY_EXISTS(Status.Code.ALREADY_EXISTS),
  FAILED_PRECONDITION(Status.Code.FAILED_PRECONDITION),
  /** A limit on a request's size or cost was exceeded, or the node is overloaded. */
  RESOURCE_EXHAUSTED(Status.Code.RESOURCE_EXHAUSTED),
  /** The node cannot serve now (storage failing, shutting down, no answer in time): retry later. */
  UNAVAILABLE(Status.Code.UNAVAILABLE),
  /** Stored data is damaged (a checksum mismatch, a truncated file): retrying will not help. */
  DATA_LOSS(Status.Code.DATA_LOSS),
  /** A failure nobody foresaw; the node logged it with its stack. */
  INTERNAL(Status.Code.INTERNAL),
  /**
   * The tablet no longer serves the row (it split, closed or moved): look the row up again
   * and retry there. Between nodes a router retries it itself; a client sees it only when
   * the router ran out of time, as UNAVAILABLE.
   */
  MOVED(Status.Code.UNAVAILABLE),
  /**
   * The request named (in the {@link WireNames#TABLET_HEADER} header) a tablet that does not
   * hold its row; nothing was applied. The client locates the row again and retries at once.
   */
  STALE_ROUTE(Status.Code.FAILED_PRECONDITION),
  /** The call carried no credentials the node accepts (none, malformed, expired, forged). */
  UNAUTHENTICATED(Status.Code.UNAUTHENTICATED),
  /** The caller is known but lacks the permission the call needs on its resource. */
  PERMISSION_DENIED(Status.Code.PERMISSION_DENIED),
  /** A change made against a version (an etag) that is no longer the current one: read again, retry. */
  ABORTED(Status.Code.ABORTED);

  private final Status.Code grpc;

  ErrorCode(Status.Code grpc) {
    this.grpc = grpc;
  }

  /** The gRPC status code a client receives for this refusal. */
  public Status.Code grpcCode() {
    return grpc;
  }
}
