package io.tabula.cluster.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * What was learnt about JWTs already seen, so a token sent again costs a lookup, not a
 * signature check. Two bounded caches, each of at most {@code maxEntries}:
 *
 * <ol>
 *   <li>accepted tokens, by the token itself, each with the instant it stops being good (its
 *       {@code exp} plus the skew); an entry leaves at that instant by the injected clock (the
 *       caches' ticker is the clock), and a hit is checked against the clock again, so no
 *       entry outlives its token. At most {@code maxEntries} tokens of up to
 *       {@link Authenticator#MAX_HEADER_CHARS} characters each;
 *   <li>refusals that will not change ({@link AuthProblem#permanent()}), by the token's SHA-256
 *       digest, so a flood of one forged token costs a digest and a lookup, and the memory a
 *       flood of distinct ones takes is a digest and a shared reason per entry.
 * </ol>
 *
 * <p>Thread-safe: Caffeine caches; two threads seeing the same new token may both verify it and
 * both store the same answer.
 */
final class TokenCache {
  /** An accepted token's caller, good while the clock is before {@code goodUntil}. */
  record Accepted(Authentication.Authenticated authenticated, Instant goodUntil) {}

  /** Caffeine's expiry is kept in nanoseconds; a day is ample, the check on a hit does the rest. */
  private static final Duration LONGEST_STAY = Duration.ofDays(1);

  private final Clock clock;
  private final Cache<String, Accepted> accepted;
  private final Cache<String, Authentication.Refused> refused;

  TokenCache(int maxEntries, Clock clock) {
    this.clock = clock;
    Ticker ticker = ticker(clock);
    this.accepted = Caffeine.newBuilder().maximumSize(maxEntries).ticker(ticker)
        .expireAfter(Expiry.<String, Accepted>creating((token, a) -> stay(a.goodUntil()))).build();
    this.refused = Caffeine.newBuilder().maximumSize(maxEntries).build();
  }

  /** The caller of a token accepted before, null when it is not known (or no longer good). */
  Accepted accepted(String token) {
    return accepted.getIfPresent(token);
  }

  void accept(String token, Accepted answer) {
    accepted.put(token, answer);
  }

  void forget(String token) {
    accepted.invalidate(token);
  }

  /** A refusal of the token with this digest that will not change, or null. */
  Authentication.Refused refused(String digest) {
    return refused.getIfPresent(digest);
  }

  void refuse(String digest, Authentication.Refused refusal) {
    refused.put(digest, refusal);
  }

  private Duration stay(Instant goodUntil) {
    Duration left = Duration.between(clock.instant(), goodUntil);
    return left.isNegative() ? Duration.ZERO : left.compareTo(LONGEST_STAY) > 0 ? LONGEST_STAY : left;
  }

  /** Nanoseconds of {@code clock} since the cache was made (292 years before it overflows). */
  private static Ticker ticker(Clock clock) {
    Instant origin = clock.instant();
    return () -> Duration.between(origin, clock.instant()).toNanos();
  }
}
