package io.tabula.client.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;

/**
 * A command could not do its work for a reason it states in full in the message (a bad
 * input line, a file it cannot read or write); the command line prints the message as
 * its one line of error and exits with 1.
 */
final class CommandFailedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  CommandFailedException(String message) {
    super(message);
  }

  CommandFailedException(String message, Throwable cause) {
    super(message, cause);
  }

  /** "cannot {@code action} {@code file}: reason", the reason told in words where Java gives only a path. */
  static CommandFailedException io(String action, String file, IOException e) {
    String reason = e instanceof NoSuchFileException ? "no such file or directory"
        : e instanceof AccessDeniedException ? "permission denied" : e.getMessage();
    return new CommandFailedException("cannot " + action + " " + file + ": " + reason, e);
  }
}
