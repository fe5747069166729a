package io.tabula.cluster.security;

/**
 * Reads the token out of an {@code authorization} header value, {@code Bearer <token>} (RFC
 * 6750 section 2.1): the scheme in any case, one or more spaces, then a token of
 * {@code b64token} characters (letters, digits, {@code - . _ ~ + /}, then {@code =} padding
 * only), with white space at either end of the value ignored. A value longer than
 * {@link Authenticator#MAX_HEADER_CHARS} is refused before it is looked at. Stateless.
 */
final class BearerHeader {
  private static final String SCHEME = "Bearer";

  /** The token, or why there is none. */
  sealed interface Read permits Token, Invalid {}

  record Token(String token) implements Read {}

  record Invalid(Authentication.Refused refused) implements Read {}

  private BearerHeader() {}

  static Read read(String header) {
    if (header == null) {
      return invalid(AuthProblem.MISSING, "no authorization header; send Authorization: Bearer <token>");
    }
    if (header.length() > Authenticator.MAX_HEADER_CHARS) {
      return invalid(AuthProblem.TOO_LARGE, "the authorization header is longer than "
          + Authenticator.MAX_HEADER_CHARS + " characters");
    }
    String value = header.strip();
    if (value.isEmpty()) {
      return invalid(AuthProblem.MISSING, "the authorization header is empty; send Authorization: Bearer <token>");
    }
    if (!value.regionMatches(true, 0, SCHEME, 0, SCHEME.length())
        || (value.length() > SCHEME.length() && value.charAt(SCHEME.length()) != ' ')) {
      return invalid(AuthProblem.MALFORMED, "only the Bearer scheme is accepted: Authorization: Bearer <token>");
    }
    String token = value.substring(SCHEME.length()).stripLeading();
    if (token.isEmpty()) {
      return invalid(AuthProblem.MALFORMED, "the bearer token is empty");
    }
    if (!isToken(token)) {
      return invalid(AuthProblem.MALFORMED, "the bearer token has characters RFC 6750 does not allow (letters,"
          + " digits, - . _ ~ + / and trailing = only)");
    }
    return new Token(token);
  }

  /** True for a non-empty RFC 6750 {@code b64token}. */
  static boolean isToken(String s) {
    int n = s.length();
    int end = n;
    while (end > 0 && s.charAt(end - 1) == '=') {
      end--;
    }
    if (end == 0) {
      return false;
    }
    for (int i = 0; i < end; i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  private static Invalid invalid(AuthProblem problem, String reason) {
    return new Invalid(new Authentication.Refused(problem, reason));
  }
}
