package io.tabula.cluster.grpc;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.Optional;

/**
 * RFC 3339 timestamps as filters write them ({@code 2018-03-28T14:50:00Z}), read by position:
 * one pass, no regular expression, no exception for any input. Stateless: thread-safe.
 */
final class Rfc3339 {
  private Rfc3339() {}

  /**
   * The instant of an RFC 3339 timestamp: {@code YYYY-MM-DDTHH:MM:SS}, optionally a fraction
   * of up to nine digits, then {@code Z} or an offset {@code ±HH:MM} ({@code T} and {@code Z}
   * in either case); empty if {@code t} is not one or names no real date and time. Read by
   * position, so it cannot throw or take more than one pass.
   */
  static Optional<Instant> instant(String t) {
    int n = t.length();
    if (n < 20 || !digits(t, 0, 4) || t.charAt(4) != '-' || !digits(t, 5, 7) || t.charAt(7) != '-'
        || !digits(t, 8, 10) || (t.charAt(10) != 'T' && t.charAt(10) != 't') || !digits(t, 11, 13)
        || t.charAt(13) != ':' || !digits(t, 14, 16) || t.charAt(16) != ':' || !digits(t, 17, 19)) {
      return Optional.empty();
    }
    int i = 19;
    int nanos = 0;
    if (t.charAt(i) == '.') {
      int from = ++i;
      while (i < n && i - from < 10 && t.charAt(i) >= '0' && t.charAt(i) <= '9') {
        i++;
      }
      int count = i - from;
      if (count == 0 || count > 9) {
        return Optional.empty();
      }
      nanos = number(t, from, i);
      for (int k = count; k < 9; k++) {
        nanos *= 10;
      }
    }
    if (i >= n) {
      return Optional.empty();
    }
    int offsetSeconds;
    char z = t.charAt(i);
    if ((z == 'Z' || z == 'z') && i + 1 == n) {
      offsetSeconds = 0;
    } else if ((z == '+' || z == '-') && i + 6 == n && digits(t, i + 1, i + 3) && t.charAt(i + 3) == ':'
        && digits(t, i + 4, i + 6) && number(t, i + 1, i + 3) <= 23 && number(t, i + 4, i + 6) <= 59) {
      offsetSeconds = (z == '-' ? -1 : 1) * (number(t, i + 1, i + 3) * 3600 + number(t, i + 4, i + 6) * 60);
    } else {
      return Optional.empty();
    }
    int year = number(t, 0, 4);
    int month = number(t, 5, 7);
    int day = number(t, 8, 10);
    int hour = number(t, 11, 13);
    int minute = number(t, 14, 16);
    int second = number(t, 17, 19);
    if (month < 1 || month > 12 || day < 1 || day > YearMonth.of(year, month).lengthOfMonth() || hour > 23
        || minute > 59 || second > 59) {
      return Optional.empty();
    }
    long epochSecond = LocalDateTime.of(year, month, day, hour, minute, second).toEpochSecond(ZoneOffset.UTC)
        - offsetSeconds;
    return Optional.of(Instant.ofEpochSecond(epochSecond, nanos));
  }

  /** Whether {@code t} holds only ASCII digits from {@code from} to {@code to}. */
  static boolean digits(String t, int from, int to) {
    for (int i = from; i < to; i++) {
      if (t.charAt(i) < '0' || t.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  private static int number(String t, int from, int to) {
    int n = 0;
    for (int i = from; i < to; i++) {
      n = n * 10 + (t.charAt(i) - '0');
    }
    return n;
  }
}
