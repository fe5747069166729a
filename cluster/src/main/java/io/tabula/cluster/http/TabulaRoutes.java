package io.tabula.cluster.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.parameter;
import static org.apache.pekko.http.javadsl.server.Directives.parameterOptional;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;

import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.apache.pekko.actor.ExtensionId;
import org.apache.pekko.actor.ExtensionIdProvider;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.management.javadsl.ManagementRouteProvider;
import org.apache.pekko.management.javadsl.ManagementRouteProviderSettings;
import org.apache.pekko.pattern.StatusReply;

/**
 * Tabula's own Management HTTP routes, beside Pekko's cluster routes on the node's
 * {@code --http-port} (registered in {@code pekko.management.http.routes}), all JSON:
 * <ul>
 *   <li>{@code GET /tabula/nodes}: every node: name, cluster address, status, endpoints, tablets owned.
 *   <li>{@code GET /tabula/tablets} (and {@code ?table=T}): every tablet: table, id, row range,
 *       owner, state, files and redo point.
 *   <li>{@code POST /tabula/tablets/{id}/move?to=NODE}: starts a move (202), or says why not.
 *   <li>{@code POST /tabula/nodes/{node}/drain}: moves the node's tablets away, then it leaves (202).
 * </ul>
 * and the metrics, the web console and its data ({@link ConsoleRoutes}). The views of the whole
 * directory ({@code /tabula/nodes}, {@code /tabula/tables}, {@code /tabula/tablets}) are
 * answered by the master's node, whichever node is asked ({@link WholeViews}).
 * The node attaches what the routes read once it has started ({@link #attach}); before
 * that they answer 503.
 */
public final class TabulaRoutes extends AbstractExtensionId<TabulaRoutes.Provider> implements ExtensionIdProvider {
  public static final TabulaRoutes ID = new TabulaRoutes();

  /**
   * What the routes read: the node's view of the cluster. {@code whole}: whether the node's copy
   * of the directory is the master's own (views of the whole directory are answered only there:
   * {@link WholeViews}); {@code peerHttp}: how it asks another member's Management HTTP.
   */
  public record NodeView(org.apache.pekko.actor.typed.ActorSystem<?> system, org.apache.pekko.cluster.typed.Cluster cluster,
      java.util.function.Supplier<Directory> directory, java.util.function.BooleanSupplier whole,
      org.apache.pekko.actor.typed.ActorRef<Master.Command> master,
      java.util.function.BooleanSupplier ready, Duration askTimeout, io.tabula.cluster.metrics.NodeMetrics metrics,
      io.tabula.cluster.security.PeerHttp peerHttp) {}

  /** Loaded by Pekko Management by class name. */
  public TabulaRoutes() {}

  /** Makes the routes serve {@code view}'s node. */
  public static void attach(org.apache.pekko.actor.typed.ActorSystem<?> system, NodeView view) {
    ID.get(system).view = view;
  }

  /** Whether the node of {@code system} is ready to serve (see {@link TabulaReady}). */
  static boolean ready(org.apache.pekko.actor.ActorSystem system) {
    NodeView v = ID.get(system).view;
    return v != null && v.ready().getAsBoolean();
  }

  @Override
  public ExtensionId<? extends Extension> lookup() {
    return ID;
  }

  @Override
  public Provider createExtension(ExtendedActorSystem system) {
    return new Provider();
  }

  /** The routes of one node. Thread-safe: the view is set once and then only read. */
  public static final class Provider implements Extension, ManagementRouteProvider {
    private volatile NodeView view;

    @Override
    public Route routes(ManagementRouteProviderSettings settings) {
      return concat(Directives.get(() -> concat(
          path("metrics", () -> withView(ConsoleRoutes::metrics)),
          ConsoleRoutes.home(),
          ConsoleRoutes.console(),
          pathPrefix("tabula", () -> concat(
              path("tables", () -> withView(v -> WholeViews.answered(v, w -> ConsoleRoutes.tables(w, load(w))))),
              path("keyviz", () -> withView(ConsoleRoutes::keyViz)),
              path("operations", () -> withView(ConsoleRoutes::operations)))))),
          path(PathMatchers.segment("metrics").slash("recording"), () -> post(() -> parameter("on", on ->
              withView(v -> ConsoleRoutes.recording(v, on))))),
          pathPrefix("tabula", () -> concat(
          path("nodes", () -> Directives.get(() -> withView(v -> WholeViews.answered(v, w -> load(w).thenApply(l ->
              json(StatusCodes.OK, nodes(w, l))))))),
          path("tablets", () -> Directives.get(() -> parameterOptional("table", table -> withView(v ->
              WholeViews.answered(v, w -> load(w).thenApply(l -> json(StatusCodes.OK, tablets(w, table, l)))))))),
          path(PathMatchers.segment("tablets").slash(PathMatchers.segment()).slash("move"), id -> post(() ->
              parameter("to", to -> withView(v -> completeWithFuture(move(v, id, to)))))),
          path(PathMatchers.segment("nodes").slash(PathMatchers.segment()).slash("drain"), node -> post(() ->
              withView(v -> completeWithFuture(drain(v, node))))))));
    }

    private Route withView(java.util.function.Function<NodeView, Route> route) {
      NodeView v = view;
      return v == null ? complete(json(StatusCodes.SERVICE_UNAVAILABLE, Map.of("error", "the node is starting")))
          : route.apply(v);
    }
  }

  private static Route ok(Object body) {
    return complete(json(StatusCodes.OK, body));
  }

  static HttpResponse json(StatusCode status, Object body) {
    return HttpResponse.create().withStatus(status).withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON,
        Json.write(body)));
  }

  /** The tablets' recent load from the master; none if it does not answer within 2 s. */
  private static CompletionStage<Map<String, Master.TabletLoad>> load(NodeView v) {
    return AskPattern.<Master.Command, Master.LoadReport>ask(v.master(), Master.GetLoad::new, Duration.ofSeconds(2),
        v.system().scheduler()).handle((r, err) -> err == null ? r.tablets() : Map.of());
  }

  private static List<Map<String, Object>> nodes(NodeView v, Map<String, Master.TabletLoad> load) {
    Directory d = v.directory().get();
    Map<String, Integer> owned = d.tabletsPerNode();
    Map<String, Double> ops = new java.util.HashMap<>();
    load.forEach((id, l) -> ops.merge(d.ownerOf(id), l.opsPerSecond(), Double::sum));
    List<Map<String, Object>> out = new ArrayList<>();
    for (ClusterNodes.NodeInfo n : ClusterNodes.all(v.cluster())) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", n.name());
      m.put("address", n.address().toString());
      m.put("state", n.status().toString().toLowerCase());
      m.put("grpc", n.grpc());
      m.put("http", n.http());
      m.put("tablets", owned.getOrDefault(n.name(), 0));
      m.put("opsPerSecond", Math.round(ops.getOrDefault(n.name(), 0.0)));
      out.add(m);
    }
    return out;
  }

  private static List<Map<String, Object>> tablets(NodeView v, Optional<String> table,
      Map<String, Master.TabletLoad> load) {
    Directory d = v.directory().get();
    List<Map<String, Object>> out = new ArrayList<>();
    for (TabletInfo t : d.allTablets()) {
      if (table.isPresent() && !table.get().equals(t.table())) {
        continue;
      }
      TabletPlacement p = d.placementOf(t.id());
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("table", t.table());
      m.put("id", t.id());
      m.put("start", ByteArrays.show(t.startRow()));
      m.put("end", ByteArrays.show(t.endRow()));
      m.put("owner", p.owner());
      m.put("state", p.state().name().toLowerCase());
      if (!p.peer().isEmpty()) {
        m.put(p.state() == TabletPlacement.State.PREPARING ? "to" : "from", p.peer());
      }
      m.put("files", t.files().values().stream().mapToInt(List::size).sum());
      Master.TabletLoad l = load.get(t.id());
      m.put("bytes", l == null ? 0 : l.bytes());
      m.put("opsPerSecond", l == null ? 0 : Math.round(l.opsPerSecond()));
      m.put("readsPerSecond", l == null ? 0 : Math.round(l.readsPerSecond()));
      m.put("writesPerSecond", l == null ? 0 : Math.round(l.writesPerSecond()));
      m.put("redoPoint", t.redoPoint());
      m.put("logs", p.logs());
      out.add(m);
    }
    return out;
  }

  private static CompletionStage<HttpResponse> move(NodeView v, String id, String to) {
    return AskPattern.<Master.Command, StatusReply<Done>>ask(v.master(), r -> new Master.Move(id, to, r),
        v.askTimeout(), v.system().scheduler()).handle((reply, err) -> answer(reply, err,
            () -> Map.of("tablet", id, "to", to, "moving", true)));
  }

  private static CompletionStage<HttpResponse> drain(NodeView v, String node) {
    return AskPattern.<Master.Command, StatusReply<Integer>>ask(v.master(), r -> new Master.Drain(node, r),
        v.askTimeout(), v.system().scheduler()).handle((reply, err) -> answer(reply, err,
            () -> Map.of("node", node, "draining", true, "tablets", reply.getValue())));
  }

  /** 202 with {@code accepted}'s body, or the master's refusal as an HTTP status, or 503 if it did not answer. */
  private static HttpResponse answer(StatusReply<?> reply, Throwable err,
      java.util.function.Supplier<Map<String, Object>> accepted) {
    if (err != null) {
      return json(StatusCodes.SERVICE_UNAVAILABLE, Map.of("error", "the master did not answer: " + err));
    }
    if (reply.isSuccess()) {
      return json(StatusCodes.ACCEPTED, accepted.get());
    }
    Optional<Refusal> r = Refusal.in(reply.getError());
    ErrorCode code = r.map(Refusal::code).orElse(ErrorCode.INTERNAL);
    StatusCode status = switch (code) {
      case NOT_FOUND -> StatusCodes.NOT_FOUND;
      case FAILED_PRECONDITION, INVALID_ARGUMENT -> StatusCodes.CONFLICT;
      case UNAVAILABLE, RESOURCE_EXHAUSTED -> StatusCodes.SERVICE_UNAVAILABLE;
      default -> StatusCodes.INTERNAL_SERVER_ERROR;
    };
    return json(status, Map.of("error", r.map(Refusal::message).orElse(reply.getError().getMessage())));
  }

  static CompletionStage<Boolean> readyStage(org.apache.pekko.actor.ActorSystem system) {
    return CompletableFuture.completedFuture(ready(system));
  }
}
