package io.tabula.cluster.security;

import io.tabula.actors.RateLimitedLog;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit log: one INFO line per admin change allowed and per call denied, on the logger
 * {@value #LOGGER} (route it to a file of its own in the logging configuration), as
 * {@code principal=... method=... resource=... decision=... reason="..."}. It never holds a
 * token: a principal is what a token was verified to be. Calls refused for their credentials
 * come from anyone who reaches the port, so they are logged at most once a second, with a
 * count of those left out; calls denied to a known principal are all logged. Thread-safe.
 */
public final class Audit {
  public static final String LOGGER = "tabula.audit";
  private static final Logger LOG = LoggerFactory.getLogger(LOGGER);
  private static final RateLimitedLog UNAUTHENTICATED = new RateLimitedLog(LOG, Duration.ofSeconds(1));

  /** The decisions an audit line records. */
  public enum Decision { ALLOWED, DENIED, UNAUTHENTICATED }

  private Audit() {}

  /** An admin change, allowed. */
  public static void allowed(Principal principal, String method, String resource) {
    LOG.info(line(principal.member(), method, resource, Decision.ALLOWED, ""));
  }

  /** A call denied to {@code principal} for lack of a permission. */
  public static void denied(Principal principal, String method, String resource, String reason) {
    LOG.info(line(principal.member(), method, resource, Decision.DENIED, reason));
  }

  /** A call refused for its credentials (none, or none the node accepts). */
  public static void unauthenticated(String method, String resource, String reason) {
    UNAUTHENTICATED.info(line("-", method, resource, Decision.UNAUTHENTICATED, reason));
  }

  static String line(String principal, String method, String resource, Decision decision, String reason) {
    return "principal=" + clean(principal) + " method=" + clean(method) + " resource="
        + (resource.isEmpty() ? "-" : clean(resource)) + " decision=" + decision + " reason=\""
        + clean(reason).replace('"', '\'') + "\"";
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
}
