package io.tabula.cluster.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.getFromResource;
import static org.apache.pekko.http.javadsl.server.Directives.getFromResourceDirectory;
import static org.apache.pekko.http.javadsl.server.Directives.parameter;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.redirect;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.LoadHistory;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.schema.GcPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The operator's side of a node's Management HTTP port, beside {@link TabulaRoutes}:
 * <ul>
 *   <li>{@code GET /metrics}: the node's metrics in Prometheus's text format; {@code POST
 *       /metrics/recording?on=false} pauses the timing of gRPC calls ({@code on=true} resumes).
 *   <li>{@code GET /console}: the web console (static pages under {@code io/tabula/console/}
 *       on the class path, no build step, no library fetched at run time), drawn from the JSON
 *       routes below and {@code /tabula/nodes} and {@code /tabula/tablets}.
 *   <li>{@code GET /tabula/tables}: every table with its families, GC policies, tablets,
 *       size and recent load.
 *   <li>{@code GET /tabula/keyviz?table=T}: the key visualizer's data for table T.
 *   <li>{@code GET /tabula/operations}: the latest splits, moves, merges and recoveries, and
 *       the cluster address of the master's node.
 * </ul>
 */
final class ConsoleRoutes {
  /** How long a page's data may wait for the master. */
  private static final Duration MASTER_WAIT = Duration.ofSeconds(3);

  private ConsoleRoutes() {}

  static Route metrics(TabulaRoutes.NodeView v) {
    if (v.metrics() == null) {
      return complete(TabulaRoutes.json(StatusCodes.NOT_FOUND, Map.of("error", "this node keeps no metrics "
          + "(tabula.node.metrics = off)")));
    }
    return complete(HttpResponse.create().withEntity(HttpEntities.create(ContentTypes.TEXT_PLAIN_UTF8,
        v.metrics().scrape())));
  }

  /** {@code POST /metrics/recording?on=false|true}: pauses or resumes the timing of gRPC calls. */
  static Route recording(TabulaRoutes.NodeView v, String on) {
    if (v.metrics() == null) {
      return complete(TabulaRoutes.json(StatusCodes.NOT_FOUND, Map.of("error", "this node keeps no metrics "
          + "(tabula.node.metrics = off)")));
    }
    if (!on.equals("true") && !on.equals("false")) {
      return complete(TabulaRoutes.json(StatusCodes.BAD_REQUEST, Map.of("error", "on: must be true or false, was '"
          + on + "'")));
    }
    v.metrics().grpc().recording(on.equals("true"));
    return complete(TabulaRoutes.json(StatusCodes.OK, Map.of("recording", v.metrics().grpc().recording())));
  }

  static Route console() {
    return pathPrefix("console", () -> concat(
        pathEndOrSingleSlash(() -> getFromResource("io/tabula/console/index.html", ContentTypes.TEXT_HTML_UTF8)),
        getFromResourceDirectory("io/tabula/console")));
  }

  /** {@code /} sends a browser to the console. */
  static Route home() {
    return pathEndOrSingleSlash(() -> redirect(org.apache.pekko.http.javadsl.model.Uri.create("/console/"),
        StatusCodes.FOUND));
  }

  static CompletionStage<HttpResponse> tables(TabulaRoutes.NodeView v,
      CompletionStage<Map<String, Master.TabletLoad>> load) {
    return load.thenApply(l -> TabulaRoutes.json(StatusCodes.OK, tableList(v.directory().get(), l)));
  }

  static Route keyViz(TabulaRoutes.NodeView v) {
    return parameter("table", table -> {
      if (v.directory().get().table(table) == null) {
        return complete(TabulaRoutes.json(StatusCodes.NOT_FOUND, Map.of("error", "table " + table + " not found")));
      }
      return completeWithFuture(AskPattern.<Master.Command, LoadHistory.View>ask(v.master(),
          r -> new Master.GetKeyViz(table, r), MASTER_WAIT, v.system().scheduler())
          .handle((view, err) -> err != null ? unanswered(err) : TabulaRoutes.json(StatusCodes.OK, keyVizJson(view))));
    });
  }

  static Route operations(TabulaRoutes.NodeView v) {
    return completeWithFuture(AskPattern.<Master.Command, Master.Operations>ask(v.master(), Master.GetOperations::new,
        MASTER_WAIT, v.system().scheduler()).handle((ops, err) -> err != null ? unanswered(err)
            : TabulaRoutes.json(StatusCodes.OK, Map.of("master", ops.masterAddress(), "operations",
                ops.operations().stream().map(o -> {
                  Map<String, Object> m = new LinkedHashMap<>();
                  m.put("millis", o.millis());
                  m.put("kind", o.kind());
                  m.put("table", o.table());
                  m.put("tablet", o.tablet());
                  m.put("detail", o.detail());
                  return m;
                }).toList()))));
  }

  private static HttpResponse unanswered(Throwable err) {
    return TabulaRoutes.json(StatusCodes.SERVICE_UNAVAILABLE, Map.of("error", "the master did not answer: " + err));
  }

  private static List<Map<String, Object>> tableList(Directory d, Map<String, Master.TabletLoad> load) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (TableInfo t : d.tables().values()) {
      List<TabletInfo> tablets = d.tabletsOf(t.name());
      long bytes = 0;
      double ops = 0;
      for (TabletInfo ti : tablets) {
        Master.TabletLoad l = load.get(ti.id());
        if (l != null) {
          bytes += l.bytes();
          ops += l.opsPerSecond();
        }
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", t.name());
      m.put("families", t.families().entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
          e -> describe(e.getValue()), (a, b) -> a, LinkedHashMap::new)));
      m.put("tablets", tablets.size());
      m.put("bytes", bytes);
      m.put("opsPerSecond", Math.round(ops));
      m.put("nodes", tablets.stream().map(ti -> d.ownerOf(ti.id())).filter(o -> !o.isEmpty()).distinct().count());
      out.add(m);
    }
    return out;
  }

  /** A GC policy as an operator reads it. */
  static String describe(GcPolicy p) {
    if (p instanceof GcPolicy.MaxVersions m) {
      return "keep " + m.n() + " version" + (m.n() == 1 ? "" : "s");
    } else if (p instanceof GcPolicy.MaxAge a) {
      return "keep " + Duration.ofNanos(a.micros() * 1000).toString().substring(2).toLowerCase();
    } else if (p instanceof GcPolicy.Union u) {
      return join(u.rules(), " or ", ConsoleRoutes::describe);
    } else if (p instanceof GcPolicy.Intersection i) {
      return join(i.rules(), " and ", ConsoleRoutes::describe);
    }
    return "keep all";
  }

  private static String join(List<GcPolicy> rules, String by, Function<GcPolicy, String> f) {
    return rules.stream().map(r -> "(" + f.apply(r) + ")").collect(Collectors.joining(by));
  }

  private static Map<String, Object> keyVizJson(LoadHistory.View v) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("table", v.table());
    m.put("columnMillis", v.columnMillis());
    m.put("columns", v.columnStarts());
    List<Map<String, Object>> bands = new ArrayList<>();
    for (int b = 0; b < v.bandStarts().size(); b++) {
      bands.add(Map.of("start", v.bandStarts().get(b), "end", v.bandEnds().get(b)));
    }
    m.put("bands", bands);
    m.put("tablets", v.tablets());
    Map<String, Object> metrics = new LinkedHashMap<>();
    String[] names = {"reads", "writes", "bytesRead", "bytesWritten"};
    for (int i = 0; i < names.length; i++) {
      List<Float> values = new ArrayList<>(v.values()[i].length);
      for (float f : v.values()[i]) {
        values.add(f);
      }
      metrics.put(names[i], values);
    }
    m.put("metrics", metrics);
    List<Integer> at = new ArrayList<>(v.tabletAt().length);
    for (int i : v.tabletAt()) {
      at.add(i);
    }
    m.put("tabletAt", at);
    return m;
  }
}
