package io.tabula.client.cli;

import io.tabula.client.TabulaClient;
import java.time.Duration;
import org.apache.pekko.actor.ActorSystem;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options every data and admin command takes: which node to talk to, which instance,
 * and how long one operation may take in all (retries included) before the command gives
 * up. A command line that reaches a node which is down fails after {@code --timeout}.
 */
final class ConnectionOptions {
  /** The overall deadline of one operation unless {@code --timeout} says otherwise. */
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  @Option(names = "--endpoint", paramLabel = "HOST:PORT", defaultValue = TabulaClient.DEFAULT_ENDPOINT,
      description = "The node to connect to (default ${DEFAULT-VALUE}).")
  String endpoint;

  @Option(names = "--instance", paramLabel = "PROJECT/INSTANCE",
      description = "The Cloud Bigtable project and instance the tables belong to (default tabula/tabula).")
  String instance;

  @Option(names = "--timeout", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "How long one operation may take, retries included: 500ms, 5s, 2m; a bare number is "
          + "seconds (default 5s).")
  Duration timeout = DEFAULT_TIMEOUT;

  /**
   * A client with these settings in {@code system}; the caller closes both. Bad values are
   * usage errors of {@code cmd}.
   */
  TabulaClient connect(CommandLine cmd, ActorSystem system) {
    TabulaClient.Builder b = TabulaClient.builder().actorSystem(system).deadline(timeout);
    try {
      b.endpoint(endpoint);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(cmd, "--endpoint: " + e.getMessage());
    }
    if (instance != null) {
      int slash = instance.indexOf('/');
      if (slash <= 0 || slash == instance.length() - 1 || instance.indexOf('/', slash + 1) >= 0) {
        throw new CommandLine.ParameterException(cmd, "--instance: '" + instance + "' is not of the form "
            + "project/instance");
      }
      b.instance(instance.substring(0, slash), instance.substring(slash + 1));
    }
    return b.build();
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
