package io.tabula.cluster.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.respondWithHeader;

import io.tabula.cluster.security.Guard;
import io.tabula.cluster.security.NodeSecurity;
import io.tabula.protocol.errors.ErrorCode;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.ConnectionContext;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.ServerBuilder;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.management.javadsl.PekkoManagement;

/**
 * Starts a node's Management HTTP port. Without security it is Pekko Management's own
 * server, as before. With TLS or authentication the node binds Pekko Management's routes
 * itself (its own and Tabula's: {@link TabulaRoutes}, {@link ConsoleRoutes}) over HTTPS when
 * it has a certificate, behind the node's {@link Guard}:
 * <ul>
 *   <li>{@code /ready} and {@code /alive}: open (orchestrators probe them without credentials), and
 *       {@code /bootstrap/}: open (the cluster bootstrap's peers probe it without credentials; it shows the
 *       members' cluster addresses);
 *   <li>{@code /tabula/keyviz}: {@code bigtable.keyvisualizer.get}, and {@code GET /tabula/tablets}: {@code
 *       bigtable.tables.sampleRowKeys} (readers and up: they show row keys);
 *   <li>{@code /metrics}: {@code tabula.metrics.read} (viewers and {@code roles/tabula.metricsReader});
 *   <li>any other read ({@code GET}, {@code HEAD}): {@code tabula.nodes.get} (viewers and up), which the
 *       console's pages also need; its static files are open (they hold no data, and a browser fetches them
 *       without a token);
 *   <li>any change (moves, drains, leaving or downing a member, pausing metrics): {@code tabula.nodes.manage}
 *       (admins), audited.
 * </ul>
 */
public final class ManagementHttp {
  private ManagementHttp() {}

  /** Starts the port; completes with the port it is bound to. */
  public static CompletionStage<Integer> start(ActorSystem<?> system, String host, int port, NodeSecurity security) {
    if (!security.guard().authenticates() && security.serverTls().isEmpty()) {
      return PekkoManagement.get(system).start().thenApply(uri -> uri.port());
    }
    // Fetched once (the cluster bootstrap's contact point is set from them): with HTTPS, its scheme is https.
    Route routes = guarded(security.guard(), security.serverTls().isEmpty() ? PekkoManagement.get(system).getRoutes()
        : PekkoManagement.get(system).getRoutes(s -> s.withHttpsConnectionContext(security.serverTls().get()
            .connectionContext())));
    ServerBuilder server = Http.get(system).newServerAt(host, port);
    if (security.serverTls().isPresent()) {
      server = server.enableHttps(security.serverTls().get().connectionContext());
      // This node's requests to the others' Management HTTP (WholeViews, the cluster bootstrap's probes) trust
      // the cluster's certificates.
      Http.get(system).setDefaultClientHttpsContext(ConnectionContext.httpsClient(security.clusterClientContext()));
    }
    return server.bind(routes).thenApply(binding -> {
      CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseServiceUnbind(), "management-http-unbind",
          () -> binding.unbind().thenApply(d -> Done.getInstance()));
      return binding.localAddress().getPort();
    });
  }

  /** {@code inner} behind {@code guard}, as the class comment describes. */
  static Route guarded(Guard guard, Route inner) {
    return extractRequest(request -> {
      String path = request.getUri().path();
      if (path.equals("/ready") || path.equals("/alive") || path.startsWith("/bootstrap/") || isConsoleFile(path)) {
        return inner;
      }
      boolean read = request.method().equals(HttpMethods.GET) || request.method().equals(HttpMethods.HEAD);
      String permission = path.equals("/metrics") ? "tabula.metrics.read"
          : path.equals("/tabula/keyviz") ? "bigtable.keyvisualizer.get" // row keys: data, for readers
          : path.equals("/tabula/tablets") && read ? "bigtable.tables.sampleRowKeys" // tablets' rows, as SampleRowKeys
          : read ? "tabula.nodes.get" : "tabula.nodes.manage";
      Guard.Admission a = guard.admitHttp(request, permission, request.method().value() + " " + path, !read);
      if (a instanceof Guard.Admission.Refused r) {
        boolean unauthenticated = r.code() == ErrorCode.UNAUTHENTICATED;
        Route refusal = complete(TabulaRoutes.json(unauthenticated ? StatusCodes.UNAUTHORIZED : StatusCodes.FORBIDDEN,
            Map.of("error", r.message())));
        return unauthenticated ? respondWithHeader(RawHeader.create("WWW-Authenticate", "Bearer realm=\"tabula\""),
            () -> refusal) : refusal;
      }
      return inner;
    });
  }

  /** The console's static files: pages and scripts, no data. */
  private static boolean isConsoleFile(String path) {
    return path.equals("/console") || path.startsWith("/console/");
  }

}
