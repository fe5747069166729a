package io.tabula.cluster.client;

import com.google.bigtable.v2.Bigtable;
import com.google.bigtable.v2.BigtableHandlerFactory;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.ErrorDetails;
import io.tabula.protocol.errors.WireNames;
import io.tabula.protocol.locations.Locations;
import io.tabula.protocol.locations.LocationsHandlerFactory;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.grpc.GrpcServiceException;
import org.apache.pekko.grpc.javadsl.MetadataBuilder;
import org.apache.pekko.grpc.javadsl.ServiceHandler;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * A Cloud Bigtable data service and a Tabula Locations service on 127.0.0.1 whose answers
 * the test scripts per RPC, for what a real node does not do on demand: never answer, fail
 * with a chosen code and status details, break a stream after some rows, move a tablet. It
 * records every request and the tablet each names in its {@value WireNames#TABLET_HEADER}
 * header. RPCs without a script answer UNIMPLEMENTED; while {@code locate} has none, a
 * client finds no Locations service and routes every row to this node, naming no tablet.
 * Thread-safe; {@link #close} stops it.
 */
final class FakeNode implements AutoCloseable {
  private final ActorSystem system;
  private final ServerBinding binding;
  private final Map<String, Function<Object, Object>> scripts = new ConcurrentHashMap<>();
  private final Map<String, List<Object>> requests = new ConcurrentHashMap<>();
  private final Map<String, List<String>> tablets = new ConcurrentHashMap<>();

  private FakeNode() {
    system = ActorSystem.create("fake-node", ConfigFactory.parseString("""
        pekko.loglevel = WARNING
        pekko.actor.serialize-messages = off
        pekko.http.server.enable-http2 = on
        pekko.http.server.preview.enable-http2 = on
        pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        """).withFallback(ConfigFactory.load()));
    InvocationHandler scripted = (proxy, method, args) -> {
      if (method.getDeclaringClass() == Object.class) {
        return method.invoke(this, args);
      }
      String rpc = method.getName();
      requests.computeIfAbsent(rpc, k -> new CopyOnWriteArrayList<>()).add(args[0]);
      Function<Object, Object> script = scripts.get(rpc);
      if (script != null) {
        return script.apply(args[0]);
      }
      GrpcServiceException e = new GrpcServiceException(Status.UNIMPLEMENTED.withDescription(rpc));
      return method.getReturnType() == Source.class ? Source.failed(e) : CompletableFuture.failedFuture(e);
    };
    Bigtable data = (Bigtable) Proxy.newProxyInstance(Bigtable.class.getClassLoader(),
        new Class<?>[] {Bigtable.class}, scripted);
    Locations locations = (Locations) Proxy.newProxyInstance(Locations.class.getClassLoader(),
        new Class<?>[] {Locations.class}, scripted);
    org.apache.pekko.japi.function.Function<HttpRequest, CompletionStage<HttpResponse>> services =
        ServiceHandler.concatOrNotFound(
        BigtableHandlerFactory.partial(data, Bigtable.name, system),
        LocationsHandlerFactory.partial(locations, Locations.name, system));
    binding = Http.get(system).newServerAt("127.0.0.1", 0).bind(
        (org.apache.pekko.japi.function.Function<HttpRequest, CompletionStage<HttpResponse>>) request -> {
          recordTablet(request);
          return services.apply(request);
        }).toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  static FakeNode start() {
    return new FakeNode();
  }

  String endpoint() {
    return "127.0.0.1:" + binding.localAddress().getPort();
  }

  /** Answers every later {@code rpc} (the method name, e.g. "mutateRow" or "locate") with {@code script}. */
  @SuppressWarnings("unchecked")
  <Q> void on(String rpc, Function<Q, ?> script) {
    scripts.put(rpc, (Function<Object, Object>) script);
  }

  /** The requests of {@code rpc} received so far, in order. */
  @SuppressWarnings("unchecked")
  <Q> List<Q> requests(String rpc) {
    return List.copyOf((List<Q>) (List<?>) requests.getOrDefault(rpc, List.of()));
  }

  /** The tablet each request of {@code rpc} so far named in its header, in order; "" for none. */
  List<String> tablets(String rpc) {
    return List.copyOf(tablets.getOrDefault(rpc, List.of()));
  }

  /** Forgets the requests received so far. */
  void forgetRequests() {
    requests.clear();
    tablets.clear();
  }

  /** Forgets every script and request: each RPC answers UNIMPLEMENTED again. */
  void reset() {
    scripts.clear();
    forgetRequests();
  }

  /** The fake's actor system, which clients of it may share (it stays the fake's to terminate). */
  ActorSystem system() {
    return system;
  }

  int calls(String rpc) {
    return requests.getOrDefault(rpc, List.of()).size();
  }

  /** A unary answer that never comes. */
  static <T> CompletionStage<T> never() {
    return new CompletableFuture<>();
  }

  static <T> CompletionStage<T> failing(Status status) {
    return failing(new GrpcServiceException(status));
  }

  static <T> CompletionStage<T> failing(GrpcServiceException e) {
    return CompletableFuture.failedFuture(e);
  }

  /**
   * A refusal as a Tabula node sends it: the code's gRPC status with {@code message}, and
   * the rich details ({@link ErrorDetails#of}: the ErrorInfo reason, and a RetryInfo when
   * {@code retryDelay} is not null) in the {@value WireNames#STATUS_DETAILS_TRAILER} trailer.
   */
  static GrpcServiceException refusal(ErrorCode code, String message, Duration retryDelay) {
    byte[] details = ErrorDetails.of(code, message, null, retryDelay).toByteArray();
    return new GrpcServiceException(Status.fromCode(code.grpcCode()).withDescription(message),
        new MetadataBuilder().addBinary(WireNames.STATUS_DETAILS_TRAILER, ByteString.fromArray(details)).build());
  }

  /** A stale-route answer told by the {@value WireNames#STALE_ROUTE_TRAILER} trailer alone, with no details. */
  static GrpcServiceException staleRouteByTrailer(String message) {
    return new GrpcServiceException(Status.FAILED_PRECONDITION.withDescription(message),
        new MetadataBuilder().addText(WireNames.STALE_ROUTE_TRAILER, "1").build());
  }

  private void recordTablet(HttpRequest request) {
    String path = request.getUri().path();
    String method = path.substring(path.lastIndexOf('/') + 1);
    if (method.isEmpty()) {
      return;
    }
    String rpc = Character.toLowerCase(method.charAt(0)) + method.substring(1);
    String tablet = request.getHeader(WireNames.TABLET_HEADER).map(HttpHeader::value).orElse("");
    tablets.computeIfAbsent(rpc, k -> new CopyOnWriteArrayList<>()).add(tablet);
  }

  @Override
  public void close() {
    binding.terminate(Duration.ofSeconds(1)).toCompletableFuture().orTimeout(10, TimeUnit.SECONDS)
        .exceptionally(e -> null).join();
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
  }
}
