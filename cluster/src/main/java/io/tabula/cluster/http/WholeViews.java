package io.tabula.cluster.http;

import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.optionalHeaderValueByName;

import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.Master;
import io.tabula.cluster.security.PeerHttp;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The operator's views of the whole directory ({@code /tabula/nodes}, {@code /tabula/tables},
 * {@code /tabula/tablets}) are answered by the node that runs the master, whose copy is the
 * master's own directory: any other node forwards the request there over Management HTTP and
 * passes its answer on, so no node but the master's needs the whole directory to show it
 * (paper §5.1: only the master and METADATA know every tablet). A forwarded request carries
 * {@link #FORWARDED} and is answered where it lands, whatever that node holds (it is never
 * forwarded twice). The node running the master answers from the master's own directory when
 * its copy is not that yet. A node that does not hold the whole directory (every node but the
 * master's holds only its share of it) answers 503 rather than show a part as the whole: to a
 * request forwarded to it after the master left (ask again), and when the master's node cannot
 * be forwarded to: its Management HTTP port is not known to the others (started with port 0:
 * the port is chosen after its cluster roles are set), or it is not a member this node sees.
 * Between nodes with TLS the request goes over HTTPS trusting the cluster's CA ({@link
 * PeerHttp}) and carries the caller's {@code Authorization} header, which the master's node
 * checks again; a caller known only by a client certificate has none to pass on, and is
 * answered 401 there: ask the master's node itself. Stateless.
 */
final class WholeViews {
  /** Header of a request one node forwarded to another. */
  static final String FORWARDED = "Tabula-Forwarded";
  /** Header of a view's answer: the name of the node whose copy it shows. */
  static final String SHOWN_BY = "Tabula-Shown-By";
  private static final String AUTHORIZATION = "Authorization";
  /** How long the master may take to say where it runs. */
  private static final Duration MASTER_WAIT = Duration.ofSeconds(2);

  private WholeViews() {}

  /** {@code local}'s answer where this node holds the master's whole directory, else the master's node's. */
  static Route answered(TabulaRoutes.NodeView v, Function<TabulaRoutes.NodeView, CompletionStage<HttpResponse>> local) {
    return optionalHeaderValueByName(FORWARDED, forwarded -> extractRequest(request -> completeWithFuture(
        v.whole().getAsBoolean() ? here(v, local) : forward(v, request, local, forwarded.isPresent()))));
  }

  /** {@code local}'s answer, from the whole directory {@code v} holds, saying which node gave it. */
  private static CompletionStage<HttpResponse> here(TabulaRoutes.NodeView v,
      Function<TabulaRoutes.NodeView, CompletionStage<HttpResponse>> local) {
    String self = v.cluster().selfMember().address().toString();
    String name = ClusterNodes.all(v.cluster()).stream().filter(n -> n.address().toString().equals(self))
        .map(ClusterNodes.NodeInfo::name).findFirst().orElse(self);
    return local.apply(v).thenApply(r -> r.addHeader(RawHeader.create(SHOWN_BY, name)));
  }

  /**
   * The answer of the node that runs the master: this one, from the master's own directory
   * (its copy may not be it yet: the master has just started here, or the copy took an answer
   * first), or another, over Management HTTP, unless {@code forwarded} here already.
   */
  private static CompletionStage<HttpResponse> forward(TabulaRoutes.NodeView v, HttpRequest request,
      Function<TabulaRoutes.NodeView, CompletionStage<HttpResponse>> local, boolean forwarded) {
    return AskPattern.<Master.Command, Master.Operations>ask(v.master(), Master.GetOperations::new, MASTER_WAIT,
        v.system().scheduler()).handle((ops, err) -> {
          if (err != null) {
            return CompletableFuture.completedFuture(unavailable("the master did not answer: " + err));
          }
          if (ops.masterAddress().equals(v.system().address().toString())) {
            return AskPattern.<Master.Command, Directory>ask(v.master(), Master.GetDirectory::new, MASTER_WAIT,
                v.system().scheduler()).handle((d, failed) -> failed != null
                    ? CompletableFuture.completedFuture(unavailable("the master did not answer: " + failed))
                    : here(new TabulaRoutes.NodeView(v.system(), v.cluster(), () -> d, () -> true, v.master(),
                        v.ready(), v.askTimeout(), v.metrics(), v.peerHttp()), local)).thenCompose(x -> x);
          }
          if (forwarded) {
            return CompletableFuture.completedFuture(unavailable("this node no longer runs the master; ask again"));
          }
          for (ClusterNodes.NodeInfo n : ClusterNodes.all(v.cluster())) {
            if (n.address().toString().equals(ops.masterAddress()) && n.http().contains(":")
                && !n.http().endsWith(":0")) {
              // a new GET of the same path and query (the one asked may have come over HTTP/2), over HTTPS
              // when the nodes have TLS, with the caller's credentials: the master's node checks them again
              PeerHttp peers = v.peerHttp();
              HttpRequest there = HttpRequest.GET(peers.scheme() + "://" + n.http() + request.getUri().toRelative())
                  .addHeader(RawHeader.create(FORWARDED, "1"));
              Optional<HttpHeader> authorization = request.getHeader(AUTHORIZATION);
              if (authorization.isPresent()) {
                there = there.addHeader(authorization.get());
              }
              Optional<HttpsConnectionContext> tls = peers.context();
              CompletionStage<HttpResponse> answer = tls.isPresent()
                  ? Http.get(v.system()).singleRequest(there, tls.get()) : Http.get(v.system()).singleRequest(there);
              return answer.<HttpResponse>handle((r, failed) -> failed == null
                  ? r : unavailable("the master's node " + n.name() + " did not answer: " + failed));
            }
          }
          // not a member seen here, or its Management HTTP port is not known (it asked for any free port)
          return CompletableFuture.completedFuture(unavailable("the master's node (" + ops.masterAddress() + ") "
              + "cannot be asked over Management HTTP (not a member seen here, or started with its HTTP port 0), "
              + "and this node holds only its share of the directory; ask that node"));
        }).thenCompose(x -> x);
  }

  private static HttpResponse unavailable(String why) {
    return TabulaRoutes.json(StatusCodes.SERVICE_UNAVAILABLE, Map.of("error", why));
  }
}
