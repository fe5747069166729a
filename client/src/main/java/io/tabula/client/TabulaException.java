package io.tabula.client;

import io.grpc.Status;
import io.tabula.protocol.errors.ErrorCode;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * An operation of the Tabula client that failed, as values a program can decide on: the
 * gRPC status code the node (or the client itself, for a deadline, a closed client or a
 * node it could not reach) answered with, the description on its own, Tabula's reason and
 * suggested retry delay when the node sent them in the status details
 * ({@code io.tabula.protocol.errors.ErrorDetails}), and whether the node could not be
 * reached at all, or not trusted ({@link #isCertificateRejected}). A node that refused the
 * call's credentials answers UNAUTHENTICATED with the reason {@link
 * ErrorCode#UNAUTHENTICATED}, one that refused its caller PERMISSION_DENIED with {@link
 * ErrorCode#PERMISSION_DENIED}. {@link #getMessage()} is {@code CODE: description}, for
 * people; nothing in the client parses it. Immutable.
 */
public final class TabulaException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;
  private final String description;
  private final ErrorCode reason;
  private final Duration retryDelay;
  private final Contact contact;

  /** How far the call got: whether a node answered it, or it never reached one. */
  enum Contact {
    /** A node answered, or the client failed on its own. */
    ANSWERED,
    /** No connection: refused, unresolved, lost. */
    UNREACHABLE,
    /** The TLS handshake failed on the node's certificate, which the client does not trust. */
    CERTIFICATE_REJECTED
  }

  public TabulaException(Status.Code code, String description, Throwable cause) {
    this(code, description, cause, null, null, Contact.ANSWERED);
  }

  public TabulaException(Status.Code code, String description) {
    this(code, description, null);
  }

  /**
   * @param reason Tabula's reason from the status details, or null
   * @param retryDelay the wait the node suggested before another attempt, or null
   * @param contact whether the request reached a node, or why not
   */
  TabulaException(Status.Code code, String description, Throwable cause, ErrorCode reason, Duration retryDelay,
      Contact contact) {
    super(code + ": " + description, cause);
    this.code = Objects.requireNonNull(code, "code");
    this.description = Objects.requireNonNull(description, "description");
    this.reason = reason;
    this.retryDelay = retryDelay;
    this.contact = Objects.requireNonNull(contact, "contact");
  }

  /** The gRPC status code, e.g. NOT_FOUND for an unknown table. */
  public Status.Code code() {
    return code;
  }

  /** What went wrong, without the code: the node's description, or the client's own words. */
  public String description() {
    return description;
  }

  /**
   * Why Tabula refused the request, from the {@code ErrorInfo} of the status details the
   * node sent (a stale-route answer recognized by its trailer alone is
   * {@link ErrorCode#STALE_ROUTE} too); empty when the node sent none (an older node, Google's
   * emulator) or the client failed on its own.
   */
  public Optional<ErrorCode> reason() {
    return Optional.ofNullable(reason);
  }

  /** How long the node asked the client to wait before trying again ({@code RetryInfo}), if it did. */
  public Optional<Duration> retryDelay() {
    return Optional.ofNullable(retryDelay);
  }

  /**
   * True if the client could not reach the node (the connection was refused, the host did
   * not resolve, the connection failed): the node never answered, so this says nothing
   * about the request itself.
   */
  public boolean isConnectionFailure() {
    return contact != Contact.ANSWERED;
  }

  /**
   * True if the client did not trust the node's TLS certificate (not signed by a CA the
   * client trusts, issued for another host, expired), so it never sent the request: a
   * connection failure that a retry would meet again, so it is not retried.
   */
  public boolean isCertificateRejected() {
    return contact == Contact.CERTIFICATE_REJECTED;
  }

  /**
   * True for the codes a retry may cure: UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED,
   * RESOURCE_EXHAUSTED; but never for a {@linkplain #isCertificateRejected rejected certificate}.
   */
  public boolean isRetryable() {
    if (contact == Contact.CERTIFICATE_REJECTED) {
      return false;
    }
    return code == Status.Code.UNAVAILABLE || code == Status.Code.ABORTED || code == Status.Code.DEADLINE_EXCEEDED
        || code == Status.Code.RESOURCE_EXHAUSTED;
  }

  /** The same failure (code, cause, reason, delay, connection failure) told with another description. */
  public TabulaException withDescription(String newDescription) {
    return new TabulaException(code, newDescription, getCause(), reason, retryDelay, contact);
  }
}
