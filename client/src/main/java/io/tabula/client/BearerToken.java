package io.tabula.client;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A bearer token, checked to fit an HTTP header value, as a client sends it: {@code
 * authorization: Bearer <token>} (RFC 6750). The token is a secret, so nothing here ever
 * shows it: {@link #toString()} hides it, and a refusal names the offending character's
 * position and code, never the token. Immutable.
 */
public final class BearerToken {
  private static final Pattern IPV4_LOOPBACK = Pattern.compile("127\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}");
  private final String token;

  private BearerToken(String token) {
    this.token = token;
  }

  /**
   * {@code token}, checked: non-empty, and only visible ASCII characters ({@code !} to
   * {@code ~}): an HTTP header value may carry no control characters (a line break would
   * end the header), gRPC's ASCII metadata no others, and white space would end the token.
   * Throws {@link IllegalArgumentException} otherwise.
   */
  public static BearerToken of(String token) {
    Objects.requireNonNull(token, "token");
    if (token.isEmpty()) {
      throw new IllegalArgumentException("the token is empty");
    }
    for (int i = 0; i < token.length(); i++) {
      char c = token.charAt(i);
      if (c >= '!' && c <= '~') {
        continue;
      }
      String where = " (U+" + String.format("%04X", (int) c) + " at character " + (i + 1) + " of " + token.length()
          + "; the token itself is not shown)";
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        throw new IllegalArgumentException("the token has white space, which would end it in the authorization"
            + " header (a line break read from a file with it?)" + where);
      }
      throw new IllegalArgumentException("the token has a character an HTTP header value may not carry" + where);
    }
    return new BearerToken(token);
  }

  /** The value of the {@code authorization} header: {@code Bearer <token>}. */
  public String authorization() {
    return "Bearer " + token;
  }

  /** Never the token. */
  @Override
  public String toString() {
    return "BearerToken[hidden]";
  }

  /**
   * Whether a token may be sent without TLS to {@code authority} ({@code host}, {@code
   * host:port} or {@code [v6]:port}): only to a loopback address, {@code localhost}, {@code
   * 127.x.x.x} or {@code ::1}, which never leaves the machine. The name is not resolved.
   */
  public static boolean mayTravelInPlaintextTo(String authority) {
    if (authority == null) {
      return false;
    }
    String host = authority;
    if (host.startsWith("[")) {
      int end = host.indexOf(']');
      host = end < 0 ? host : host.substring(1, end);
    } else if (host.indexOf(':') >= 0 && host.indexOf(':') == host.lastIndexOf(':')) {
      host = host.substring(0, host.indexOf(':'));
    }
    return host.equalsIgnoreCase("localhost") || IPV4_LOOPBACK.matcher(host).matches() || host.equals("::1")
        || host.equals("0:0:0:0:0:0:0:1");
  }
}
