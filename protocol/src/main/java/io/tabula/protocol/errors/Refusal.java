package io.tabula.protocol.errors;

import io.tabula.protocol.kryo.KryoSerializable;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.pekko.pattern.StatusReply;

/**
 * A request refused, as a value: a code that programs match on and a message for people
 * (never parsed). An actor answers {@link #reply()}; the asker's future then fails with a
 * {@link Refused} carrying this record, across nodes too (the Kryo {@code StatusReply}
 * serializer writes it as the record, see {@code docs/formats/kryo-messages.md}).
 *
 * @param code what kind of refusal, mapped to a gRPC status in one place
 * @param message what went wrong, for the client; names the field for a bad request
 */
public record Refusal(ErrorCode code, String message) implements KryoSerializable {
  public Refusal {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(message, "message");
  }

  public static Refusal of(ErrorCode code, String message) {
    return new Refusal(code, message);
  }

  /** The error reply that carries this refusal. */
  public <T> StatusReply<T> reply() {
    return StatusReply.error(new Refused(this));
  }

  /** This refusal as an exception, to fail a future with. */
  public Refused exception() {
    return new Refused(this);
  }

  /**
   * The refusal a failure carries, looking through {@link CompletionException} and
   * {@link ExecutionException} wrappers; empty for any other failure.
   */
  public static Optional<Refusal> in(Throwable failure) {
    Throwable e = unwrap(failure);
    return e instanceof Refused r ? Optional.of(r.refusal()) : Optional.empty();
  }

  /** Whether {@code failure} is a refusal with {@code code}. */
  public static boolean is(Throwable failure, ErrorCode code) {
    return in(failure).map(r -> r.code() == code).orElse(false);
  }

  /** {@code failure} without the wrappers futures put around it. */
  public static Throwable unwrap(Throwable failure) {
    Throwable e = failure;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  @Override
  public String toString() {
    return code + ": " + message;
  }
}
