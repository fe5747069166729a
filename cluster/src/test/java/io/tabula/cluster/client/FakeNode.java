package io.tabula.cluster.client;

import com.google.bigtable.v2.Bigtable;
import com.google.bigtable.v2.BigtableHandlerFactory;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import java.lang.reflect.Proxy;
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
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.stream.javadsl.Source;

/**
 * A Cloud Bigtable data service on 127.0.0.1 whose answers the test scripts per RPC, for
 * what a real node does not do on demand: never answer, fail with a chosen code, break a
 * stream after some rows. It records every request. RPCs without a script answer
 * UNIMPLEMENTED; it serves no Locations service, so a client routes every row to it.
 * Thread-safe; {@link #close} stops it.
 */
final class FakeNode implements AutoCloseable {
  private final ActorSystem system;
  private final ServerBinding binding;
  private final Map<String, Function<Object, Object>> scripts = new ConcurrentHashMap<>();
  private final Map<String, List<Object>> requests = new ConcurrentHashMap<>();

  private FakeNode() {
    system = ActorSystem.create("fake-node", ConfigFactory.parseString("""
        pekko.loglevel = WARNING
        pekko.actor.serialize-messages = off
        pekko.http.server.enable-http2 = on
        pekko.http.server.preview.enable-http2 = on
        pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        """).withFallback(ConfigFactory.load()));
    Bigtable service = (Bigtable) Proxy.newProxyInstance(Bigtable.class.getClassLoader(),
        new Class<?>[] {Bigtable.class}, (proxy, method, args) -> {
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
        });
    binding = Http.get(system).newServerAt("127.0.0.1", 0).bind(BigtableHandlerFactory.create(service, system))
        .toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  static FakeNode start() {
    return new FakeNode();
  }

  String endpoint() {
    return "127.0.0.1:" + binding.localAddress().getPort();
  }

  /** Answers every later {@code rpc} (the method name, e.g. "mutateRow") with {@code script}. */
  @SuppressWarnings("unchecked")
  <Q> void on(String rpc, Function<Q, ?> script) {
    scripts.put(rpc, (Function<Object, Object>) script);
  }

  /** The requests of {@code rpc} received so far, in order. */
  @SuppressWarnings("unchecked")
  <Q> List<Q> requests(String rpc) {
    return List.copyOf((List<Q>) (List<?>) requests.getOrDefault(rpc, List.of()));
  }

  /** Forgets the requests received so far. */
  void forgetRequests() {
    requests.clear();
  }

  /** Forgets every script and request: each RPC answers UNIMPLEMENTED again. */
  void reset() {
    scripts.clear();
    requests.clear();
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
    return CompletableFuture.failedFuture(new GrpcServiceException(status));
  }

  @Override
  public void close() {
    binding.terminate(java.time.Duration.ofSeconds(1)).toCompletableFuture().orTimeout(10, TimeUnit.SECONDS)
        .exceptionally(e -> null).join();
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
  }
}
