package io.tabula.client.cli;

import io.tabula.client.TabulaClient;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.actor.ActorSystem;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options every data and admin command takes: which node to talk to, which instance,
 * and how long one operation may take in all (retries included) before the command gives
 * up (TLS and a token are {@link CredentialOptions}). A command line that reaches a node
 * which is down fails after {@code --timeout}.
 *
 * <p>They may come before the command, as cbt takes its flags ({@code tabula --endpoint
 * h:p ls}), or after it ({@code tabula ls --endpoint h:p}): {@link TabulaCommands#addTo}
 * gives the top-level command an instance of its own, which also carries the process
 * environment. An option given after the command wins over the same option given before
 * it. Without {@code --endpoint} the endpoint comes from {@value #ENDPOINT_VARIABLE}, as
 * for cbt and Google's clients, and without that from {@value TabulaClient#DEFAULT_ENDPOINT}.
 * A field left null was not given.
 */
final class ConnectionOptions {
  /** The overall deadline of one operation unless {@code --timeout} says otherwise. */
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
  /** The environment variable cbt and the official clients read the emulator's (here: a node's) address from. */
  static final String ENDPOINT_VARIABLE = "BIGTABLE_EMULATOR_HOST";

  @Option(names = "--endpoint", paramLabel = "HOST:PORT",
      description = "The node to connect to (default: $" + ENDPOINT_VARIABLE + " if set, else "
          + TabulaClient.DEFAULT_ENDPOINT + ").")
  String endpoint;

  @Option(names = "--instance", paramLabel = "PROJECT/INSTANCE",
      description = "The Cloud Bigtable project and instance the tables belong to (default tabula/tabula).")
  String instance;

  @Option(names = "--timeout", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "How long one operation may take, retries included: 500ms, 5s, 2m; a bare number is "
          + "seconds (default 5s).")
  Duration timeout;

  /** The process environment; set on the top-level command's instance only, null on a command's. */
  private final Map<String, String> environment;

  /** A command's own options (picocli makes these). */
  ConnectionOptions() {
    this(null);
  }

  /** The options given before the command, which also hold the environment the command line runs in. */
  ConnectionOptions(Map<String, String> environment) {
    this.environment = environment;
  }

  /**
   * What a command given these options connects with: each option as given after the
   * command, else as given before it ({@code before}, null if the command line has no
   * options before the command), else the environment's {@value #ENDPOINT_VARIABLE} for the
   * endpoint, else the defaults; with {@code credentials} ({@link CredentialOptions}).
   */
  Settings resolve(ConnectionOptions before, CredentialOptions.Credentials credentials) {
    Map<String, String> env = before != null && before.environment != null ? before.environment : System.getenv();
    String endpointFrom = "--endpoint";
    String ep = first(endpoint, before == null ? null : before.endpoint);
    if (ep == null) {
      String variable = env.get(ENDPOINT_VARIABLE);
      if (variable != null && !variable.isBlank()) {
        ep = variable.strip();
        endpointFrom = ENDPOINT_VARIABLE;
      } else {
        ep = TabulaClient.DEFAULT_ENDPOINT;
      }
    }
    Duration t = first(timeout, before == null ? null : before.timeout);
    return new Settings(ep, endpointFrom, first(instance, before == null ? null : before.instance),
        t == null ? DEFAULT_TIMEOUT : t, credentials);
  }

  private static <T> T first(T after, T before) {
    return after != null ? after : before;
  }

  /**
   * The connection a command runs with.
   *
   * @param endpoint the node's {@code host:port}
   * @param endpointFrom where it came from, to name in an error: {@code --endpoint} or the variable
   * @param instance {@code project/instance}, or null for the client's default
   * @param timeout the deadline of one operation, retries included
   * @param credentials the CA to trust and the token, each null when not given (plaintext, no token)
   */
  record Settings(String endpoint, String endpointFrom, String instance, Duration timeout,
      CredentialOptions.Credentials credentials) {
    Settings {
      Objects.requireNonNull(endpoint, "endpoint");
      Objects.requireNonNull(timeout, "timeout");
      Objects.requireNonNull(credentials, "credentials");
    }

    /**
     * A client with these settings in {@code system}; the caller closes both. Bad values are
     * usage errors of {@code cmd}.
     */
    TabulaClient connect(CommandLine cmd, ActorSystem system) {
      TabulaClient.Builder b = TabulaClient.builder().actorSystem(system).deadline(timeout);
      try {
        b.endpoint(endpoint);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(cmd, endpointFrom + ": " + e.getMessage());
      }
      if (instance != null) {
        int slash = instance.indexOf('/');
        if (slash <= 0 || slash == instance.length() - 1 || instance.indexOf('/', slash + 1) >= 0) {
          throw new CommandLine.ParameterException(cmd, "--instance: '" + instance + "' is not of the form "
              + "project/instance");
        }
        b.instance(instance.substring(0, slash), instance.substring(slash + 1));
      }
      return credentials.applyTo(b, cmd).build();
    }
  }

  /** Reads {@code 500ms}, {@code 5s}, {@code 2m} or a bare number of seconds. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern DURATION = Pattern.compile("([0-9]{1,9})(ms|s|m)?");

    @Override
    public Duration convert(String value) {
      Matcher m = DURATION.matcher(value.trim());
      if (!m.matches()) {
        throw new CommandLine.TypeConversionException("'" + value + "' is not a duration such as 500ms, 5s or 2m");
      }
      long n = Long.parseLong(m.group(1));
      Duration d = m.group(2) == null || m.group(2).equals("s") ? Duration.ofSeconds(n)
          : m.group(2).equals("ms") ? Duration.ofMillis(n) : Duration.ofMinutes(n);
      if (d.isZero()) {
        throw new CommandLine.TypeConversionException("the timeout must be positive");
      }
      return d;
    }
  }
}
