package io.tabula.actors;

import org.apache.pekko.pattern.StatusReply;

/**
 * Error replies that carry an {@link ErrorCode} across actor (and node) boundaries.
 *
 * <p>A refusal travels as a {@link StatusReply#error(String)} whose text is
 * {@code CODE: message}: Pekko serializes that form on its own, and the receiver gets the
 * code back with {@link #parse}.
 */
public final class Replies {
  private Replies() {}

  /** A failed outcome with its code and a message for the client. */
  public record Refusal(ErrorCode code, String message) {}

  public static <T> StatusReply<T> error(ErrorCode code, String message) {
    return StatusReply.error(code.name() + ": " + message);
  }

  /** The code and message of a failure from an ask; anything not made by {@link #error} is INTERNAL. */
  public static Refusal parse(Throwable t) {
    Throwable e = t;
    while ((e instanceof java.util.concurrent.CompletionException
        || e instanceof java.util.concurrent.ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    String text = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    if (e instanceof StatusReply.ErrorMessage) {
      int colon = text.indexOf(": ");
      if (colon > 0) {
        try {
          return new Refusal(ErrorCode.valueOf(text.substring(0, colon)), text.substring(colon + 2));
        } catch (IllegalArgumentException notACode) {
          return new Refusal(ErrorCode.INTERNAL, text);
        }
      }
    }
    if (e instanceof java.util.concurrent.TimeoutException) {
      return new Refusal(ErrorCode.UNAVAILABLE, "timed out: " + text);
    }
    return new Refusal(ErrorCode.INTERNAL, text);
  }
}
