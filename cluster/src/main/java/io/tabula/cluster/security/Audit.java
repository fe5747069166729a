package io.tabula.cluster.security;

import io.tabula.actors.RateLimitedLog;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit log: one INFO line per admin change allowed and per call denied, on the logger
 * {@value #LOGGER} (route it to a file of its own in the logging configuration), as
 * {@code principal=... method="..." resource="..." decision=... reason="..."} (what a caller
 * wrote, quoted). It never holds a token: a principal is what a token was verified to be.
 * Calls refused for their credentials come from anyone who reaches the port, so they are
 * logged at most once a second, with a count of those left out; calls denied to a known
 * principal a hundred at once, then at most a hundred a second. Thread-safe.
 */
public final class Audit {
  public static final String LOGGER = "tabula.audit";
  private static final Logger LOG = LoggerFactory.getLogger(LOGGER);
  private static final RateLimitedLog UNAUTHENTICATED = new RateLimitedLog(LOG, Duration.ofSeconds(1));
  /** Denials of known principals: a hundred lines at once, then a hundred a second, so that no caller fills the disk. */
  private static final RateBudget DENIED = new RateBudget(100);
  /** Denials left out since the last one logged. */
  private static final AtomicLong LEFT_OUT = new AtomicLong();

  /** The decisions an audit line records. */
  public enum Decision { ALLOWED, DENIED, UNAUTHENTICATED }

  private Audit() {}

  /** An admin change, allowed. */
  public static void allowed(Principal principal, String method, String resource) {
    LOG.info(line(principal.member(), method, resource, Decision.ALLOWED, ""));
  }

  /** A call denied to {@code principal} for lack of a permission. */
  public static void denied(Principal principal, String method, String resource, String reason) {
    if (!DENIED.take()) {
      LEFT_OUT.incrementAndGet();
      return;
    }
    long skipped = LEFT_OUT.getAndSet(0);
    LOG.info(line(principal.member(), method, resource, Decision.DENIED, reason) + (skipped == 0 ? ""
        : " (and " + skipped + " more denials left out of this log)"));
  }

  /** A call refused for its credentials (none, or none the node accepts). */
  public static void unauthenticated(String method, String resource, String reason) {
    UNAUTHENTICATED.info(line("-", method, resource, Decision.UNAUTHENTICATED, reason));
  }

  static String line(String principal, String method, String resource, Decision decision, String reason) {
    return "principal=" + clean(principal) + " method=" + quoted(method) + " resource="
        + (resource.isEmpty() ? "-" : quoted(resource)) + " decision=" + decision + " reason=" + quoted(reason);
  }

  /**
   * {@code text} fit for one line: a resource or method may come from a hostile client, so
   * control characters become '?' and more than 300 characters are cut.
   */
  static String clean(String text) {
    StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_FIELD + 1));
    for (int i = 0; i < text.length() && i < MAX_FIELD; i++) {
      char c = text.charAt(i);
      out.append(Character.isISOControl(c) ? '?' : c);
    }
    if (text.length() > MAX_FIELD) {
      out.append('…');
    }
    return out.toString();
  }

  private static final int MAX_FIELD = 300;

  /** {@code text} cleaned, in double quotes (a double quote in it becomes a single one). */
  private static String quoted(String text) {
    return "\"" + clean(text).replace('"', '\'') + "\"";
  }
}
