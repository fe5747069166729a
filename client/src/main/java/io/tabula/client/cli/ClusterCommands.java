package io.tabula.client.cli;

import io.tabula.client.BearerToken;
import io.tabula.client.TlsTrust;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import javax.net.ssl.SSLException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * The cluster's operations on the command line, over a node's Management HTTP routes
 * ({@code --http host:port}, default 127.0.0.1:8558): {@code nodes}, {@code tablets
 * [TABLE]}, {@code top [TABLE]}, {@code move TABLET NODE} and {@code drain NODE}. Any node answers for the
 * whole cluster. With {@code --tls-ca} they use https, trusting that CA; with a token
 * ({@code --token}, {@code $TABULA_TOKEN}) they send it as {@code Authorization: Bearer}, as
 * the data commands do ({@link CredentialOptions}).
 */
final class ClusterCommands {
  private ClusterCommands() {}

  abstract static class HttpCommand implements Callable<Integer> {
    @Option(names = "--http", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:8558",
        description = "A node's Management HTTP address (default ${DEFAULT-VALUE}).")
    String http;

    @Mixin
    CredentialOptions credentials;

    @Spec
    CommandLine.Model.CommandSpec spec;

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final HttpClient PLAIN = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT).build();

    /** The answer's JSON; a non-2xx answer is thrown as its error message. */
    Object call(String method, String path) throws IOException {
      CredentialOptions.Credentials c = credentials.resolve(TabulaCommands.before(spec,
          TabulaCommands.CREDENTIALS_MIXIN, CredentialOptions.class));
      CommandLine cmd = spec.commandLine();
      BearerToken token = c.bearer(cmd);
      boolean tls = c.tlsCa() != null;
      if (token != null && !tls && !BearerToken.mayTravelInPlaintextTo(http)) {
        throw new CommandLine.ParameterException(cmd, "the token is sent only over TLS or to a loopback address, and"
            + " --http " + http + " is neither: give --tls-ca");
      }
      HttpClient client = tls ? HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT)
          .sslContext(TlsTrust.context(c.trust(cmd))).build() : PLAIN;
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create((tls ? "https://" : "http://") + http + path))
          .timeout(Duration.ofSeconds(30));
      if (token != null) {
        b.header("Authorization", token.authorization());
      }
      b = method.equals("POST") ? b.POST(HttpRequest.BodyPublishers.noBody()) : b.GET();
      HttpResponse<String> r;
      try {
        r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
      } catch (ConnectException e) {
        throw new CommandFailedException("cannot reach Management HTTP at " + http + " (" + e.getMessage() + ")");
      } catch (SSLException e) {
        throw new CommandFailedException("TLS with Management HTTP at " + http + " failed (" + e.getMessage() + ")"
            + (tls ? ": is its certificate signed by the CA of --tls-ca, for the host of --http?"
            : ": does it serve https? then give --tls-ca"), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CommandFailedException("interrupted");
      }
      Object body;
      try {
        body = MiniJson.parse(r.body());
      } catch (IllegalArgumentException e) {
        throw new CommandFailedException("HTTP " + r.statusCode() + " from " + http + ": " + r.body());
      }
      if (r.statusCode() / 100 != 2) {
        Object error = body instanceof Map<?, ?> m ? m.get("error") : body;
        throw new CommandFailedException(error + (r.statusCode() == 401 ? " (" + CredentialOptions.TOKEN_HINT + ")"
            : ""));
      }
      return body;
    }

    PrintWriter out() {
      return spec.commandLine().getOut();
    }

    static String enc(String s) {
      return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static String num(Object v) {
      return v instanceof Double d ? Long.toString(Math.round(d)) : String.valueOf(v);
    }
  }

  @Command(name = "nodes", mixinStandardHelpOptions = true,
      description = "Lists the cluster's nodes: name, state, tablets owned, recent operations per second, gRPC address.")
  static final class Nodes extends HttpCommand {
    @Override
    public Integer call() throws IOException {
      List<?> nodes = (List<?>) call("GET", "/tabula/nodes");
      PrintWriter out = out();
      out.printf("%-16s %-8s %8s %8s  %s%n", "NODE", "STATE", "TABLETS", "OPS/S", "GRPC");
      for (Object o : nodes) {
        Map<?, ?> n = (Map<?, ?>) o;
        out.printf("%-16s %-8s %8s %8s  %s%n", n.get("name"), n.get("state"), num(n.get("tablets")),
            num(n.get("opsPerSecond")), n.get("grpc"));
      }
      out.flush();
      return 0;
    }
  }

  @Command(name = "tablets", mixinStandardHelpOptions = true,
      description = "Lists the tablets (of one table if given): id, row range, owner, state, size, recent load.")
  static final class Tablets extends HttpCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "TABLE", description = "Only this table's tablets.")
    String table;

    @Override
    public Integer call() throws IOException {
      List<?> tablets = (List<?>) call("GET", "/tabula/tablets" + (table == null ? "" : "?table=" + enc(table)));
      PrintWriter out = out();
      out.printf("%-12s %-24s %-16s %-16s %-10s %-9s %12s %8s%n", "TABLE", "TABLET", "START", "END", "OWNER", "STATE",
          "BYTES", "OPS/S");
      for (Object o : tablets) {
        Map<?, ?> t = (Map<?, ?>) o;
        out.printf("%-12s %-24s %-16s %-16s %-10s %-9s %12s %8s%n", t.get("table"), t.get("id"), t.get("start"),
            t.get("end"), t.get("owner"), t.get("state"), num(t.get("bytes")), num(t.get("opsPerSecond")));
      }
      out.flush();
      return 0;
    }
  }

  @Command(name = "top", mixinStandardHelpOptions = true,
      description = "Lists the hottest tablets, busiest first (as Cloud Bigtable's hot tablets list): rows read and "
          + "written per second lately, row range, owner.")
  static final class Top extends HttpCommand {
    @Option(names = {"-n", "--limit"}, defaultValue = "10", description = "How many tablets (default ${DEFAULT-VALUE}).")
    int limit;

    @Parameters(index = "0", arity = "0..1", paramLabel = "TABLE", description = "Only this table's tablets.")
    String table;

    @Override
    public Integer call() throws IOException {
      if (limit < 1) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be at least 1, was " + limit);
      }
      List<Map<?, ?>> tablets = new java.util.ArrayList<>();
      for (Object o : (List<?>) call("GET", "/tabula/tablets" + (table == null ? "" : "?table=" + enc(table)))) {
        tablets.add((Map<?, ?>) o);
      }
      tablets.sort(java.util.Comparator.comparingDouble(t -> -rate(t.get("opsPerSecond"))));
      PrintWriter out = out();
      out.printf("%-12s %-24s %9s %9s %-10s %-16s %-16s%n", "TABLE", "TABLET", "READS/S", "WRITES/S", "OWNER", "START",
          "END");
      for (Map<?, ?> t : tablets.subList(0, Math.min(limit, tablets.size()))) {
        out.printf("%-12s %-24s %9s %9s %-10s %-16s %-16s%n", t.get("table"), t.get("id"), num(t.get("readsPerSecond")),
            num(t.get("writesPerSecond")), t.get("owner"), t.get("start"), t.get("end"));
      }
      out.flush();
      return 0;
    }

    private static double rate(Object v) {
      return v instanceof Number n ? n.doubleValue() : 0;
    }
  }

  @Command(name = "move", mixinStandardHelpOptions = true,
      description = "Moves a tablet to a node (paper §5.2: compacted, handed over, opened there with nothing to replay).")
  static final class Move extends HttpCommand {
    @Parameters(index = "0", paramLabel = "TABLET", description = "The tablet id (see 'tablets').")
    String tablet;

    @Parameters(index = "1", paramLabel = "NODE", description = "The node to move it to (see 'nodes').")
    String node;

    @Override
    public Integer call() throws IOException {
      call("POST", "/tabula/tablets/" + enc(tablet) + "/move?to=" + enc(node));
      out().println("moving " + tablet + " to " + node);
      out().flush();
      return 0;
    }
  }

  @Command(name = "drain", mixinStandardHelpOptions = true,
      description = "Moves every tablet off a node, which then leaves the cluster and stops.")
  static final class Drain extends HttpCommand {
    @Parameters(index = "0", paramLabel = "NODE", description = "The node to drain (see 'nodes').")
    String node;

    @Override
    public Integer call() throws IOException {
      Map<?, ?> r = (Map<?, ?>) call("POST", "/tabula/nodes/" + enc(node) + "/drain");
      out().println("draining " + node + ": " + num(r.get("tablets")) + " tablets to move");
      out().flush();
      return 0;
    }
  }
}
