package io.tabula.client.cli;

import io.tabula.client.BearerToken;
import io.tabula.client.TabulaClient;
import io.tabula.client.TlsTrust;
import java.nio.file.Path;
import java.util.Map;
import javax.net.ssl.X509TrustManager;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options of every command that talks to a node, over gRPC or Management HTTP: the CA
 * to trust the node's TLS certificate with ({@code --tls-ca}: TLS, and https for Management
 * HTTP) and the bearer token to send ({@code --token}, else the environment's {@value
 * #TOKEN_VARIABLE}). Like {@link ConnectionOptions}, they may come before the command or
 * after it (after wins), and the top-level command's instance carries the environment.
 *
 * <p>The token is a secret: no help text, error or {@code toString} shows it (picocli shows
 * no default for an option without one, and the refusal of a bad token names the offending
 * character's position, not the token). A field left null was not given.
 */
final class CredentialOptions {
  /** The environment variable a token comes from when {@code --token} is not given. */
  static final String TOKEN_VARIABLE = "TABULA_TOKEN";
  /** Said after a node's refusal of a call's credentials. */
  static final String TOKEN_HINT = "a token is given with --token or $" + TOKEN_VARIABLE;

  @Option(names = "--tls-ca", paramLabel = "FILE",
      description = "Connect over TLS (https for Management HTTP), trusting the node's certificate if a CA "
          + "certificate in FILE (PEM) signed it.")
  Path tlsCa;

  @Option(names = "--token", paramLabel = "TOKEN",
      description = "Send 'authorization: Bearer TOKEN' with every call (default: $" + TOKEN_VARIABLE + " if "
          + "set); sent only over TLS or to a loopback address, and never printed.")
  String token;

  /** The process environment; set on the top-level command's instance only, null on a command's. */
  private final Map<String, String> environment;

  /** A command's own options (picocli makes these). */
  CredentialOptions() {
    this(null);
  }

  /** The options given before the command, which also hold the environment the command line runs in. */
  CredentialOptions(Map<String, String> environment) {
    this.environment = environment;
  }

  /**
   * What a command given these options connects with: each option as given after the
   * command, else as given before it ({@code before}, null if none), else for the token the
   * environment's {@value #TOKEN_VARIABLE} (a blank one is none).
   */
  Credentials resolve(CredentialOptions before) {
    Map<String, String> env = before != null && before.environment != null ? before.environment : System.getenv();
    Path ca = tlsCa != null ? tlsCa : before == null ? null : before.tlsCa;
    String t = token != null ? token : before == null ? null : before.token;
    String from = "--token";
    if (t == null) {
      String variable = env.get(TOKEN_VARIABLE);
      if (variable != null && !variable.isBlank()) {
        t = variable;
        from = TOKEN_VARIABLE;
      }
    }
    return new Credentials(ca, t, t == null ? null : from);
  }

  /**
   * The TLS trust and token a command runs with.
   *
   * @param tlsCa the CA file to trust, or null for plaintext
   * @param token the bearer token, or null for none
   * @param tokenFrom where the token came from, to name in an error: {@code --token} or the variable
   */
  record Credentials(Path tlsCa, String token, String tokenFrom) {
    /** {@code b} with this TLS and token; a file or token that cannot be used is a usage error of {@code cmd}. */
    TabulaClient.Builder applyTo(TabulaClient.Builder b, CommandLine cmd) {
      if (tlsCa != null) {
        b.tls(trust(cmd));
      }
      if (token != null) {
        try {
          b.token(token);
        } catch (IllegalArgumentException e) {
          throw new CommandLine.ParameterException(cmd, tokenFrom + ": " + e.getMessage());
        }
      }
      return b;
    }

    /** The trust of {@code --tls-ca}; requires it. */
    X509TrustManager trust(CommandLine cmd) {
      try {
        return TlsTrust.fromPemFile(tlsCa);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(cmd, "--tls-ca: " + e.getMessage());
      }
    }

    /** The token, checked; null if none was given. */
    BearerToken bearer(CommandLine cmd) {
      if (token == null) {
        return null;
      }
      try {
        return BearerToken.of(token);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(cmd, tokenFrom + ": " + e.getMessage());
      }
    }

    /** Never the token. */
    @Override
    public String toString() {
      return "Credentials[tlsCa=" + tlsCa + ", token=" + (token == null ? "none" : "hidden, from " + tokenFrom) + "]";
    }
  }
}
