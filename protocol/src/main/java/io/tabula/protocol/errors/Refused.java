package io.tabula.protocol.errors;

/**
 * The exception a future fails with when a request was refused: a carrier of its
 * {@link Refusal}, matched by type. It has no stack trace (a refusal is an answer, not a
 * fault) and is never logged as an error.
 */
public final class Refused extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Refusal refusal;

  Refused(Refusal refusal) {
    super(refusal.toString(), null, false, false);
    this.refusal = refusal;
  }

  public Refusal refusal() {
    return refusal;
  }

  public ErrorCode code() {
    return refusal.code();
  }
}
