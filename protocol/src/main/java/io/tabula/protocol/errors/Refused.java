package io.tabula.protocol.errors;

import io.tabula.protocol.kryo.KryoSerializable;

/**
 * The exception a future fails with when a request was refused: a carrier of its
 * {@link Refusal}, matched by type. It has no stack trace (a refusal is an answer, not a
 * fault) and is never logged as an error.
 *
 * <p>It travels between nodes as the error of a {@code StatusReply}, which Pekko serializes
 * by handing the exception to its own serializer: Kryo, which writes the refusal record and
 * makes the same typed exception on the other side.
 */
public final class Refused extends RuntimeException implements KryoSerializable {
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
