package io.tabula.client.cli;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * The durations and times the commands take: a duration is a whole number and a unit, s, m, h
 * or d ({@code 30m}, {@code 72h}, {@code 7d}); a time is RFC 3339 ({@code
 * 2024-05-01T12:00:00Z}, {@code 2024-05-01T14:00:00.5+02:00}), {@code now}, or a duration before
 * now ({@code -5m}). A mistake is a usage error of the command, naming what was given.
 */
final class TimeArgs {
  private TimeArgs() {}

  /** {@code text} as a duration; {@code what} names the argument in the error. */
  static Duration duration(ClientCommand c, String what, String text) {
    if (text.length() < 2 || text.length() > 10
        || !text.substring(0, text.length() - 1).chars().allMatch(Character::isDigit)) {
      throw c.usage(what + " " + text + ": must be a number and a unit, s, m, h or d (as 72h or 7d)");
    }
    long n = Long.parseLong(text.substring(0, text.length() - 1));
    return switch (text.charAt(text.length() - 1)) {
      case 's' -> Duration.ofSeconds(n);
      case 'm' -> Duration.ofMinutes(n);
      case 'h' -> Duration.ofHours(n);
      case 'd' -> Duration.ofDays(n);
      default -> throw c.usage(what + " " + text + ": must be a number and a unit, s, m, h or d (as 72h or 7d)");
    };
  }

  /** {@code text} as a time, a relative one counted back from {@code now}; {@code what} names the argument. */
  static Instant time(ClientCommand c, String what, String text, Instant now) {
    if (text.equals("now")) {
      return now;
    }
    if (text.startsWith("-")) {
      return now.minus(duration(c, what, text.substring(1)));
    }
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      throw c.usage(what + " " + text + ": must be an RFC 3339 time (2024-05-01T12:00:00Z), now, or a duration"
          + " before now (-5m, -2h, -1d)");
    }
  }
}
