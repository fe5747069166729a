package io.tabula.cluster.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tabula.cluster.grpc.KnownMethods;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Trailer;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Times every gRPC call the node answers, by method and status code, as the Prometheus
 * histogram {@code tabula_grpc_requests_seconds}: from the request's arrival to its last
 * response byte handed to the connection (for a streaming answer, the end of the stream), and
 * the status the answer carried (in its headers for a failure, in its trailer otherwise).
 *
 * <p>The label values are bounded: a method is one of the services' own (others, such as a
 * client's typo, count as {@code method="other"}) and a code one of gRPC's 17. One
 * {@link Timer} per pair, made once. Thread-safe.
 */
public final class GrpcMetrics {
  /** The histogram's buckets: from a quarter of a millisecond (a cached point read) to a minute-long scan. */
  private static final Duration[] BUCKETS = {Duration.ofNanos(250_000), Duration.ofNanos(500_000),
      Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
      Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
      Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10),
      Duration.ofSeconds(30), Duration.ofSeconds(60)};
  private static final String[] CODES = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
      "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};

  private static final String UNKNOWN = "2";
  private static final String UNIMPLEMENTED = "12";
  private static final String INTERNAL = "13";

  private final MeterRegistry registry;
  /** The timers of each served method's path (and of "other"), made on first use. */
  private final ConcurrentHashMap<String, Method> methods = new ConcurrentHashMap<>();
  private static final String OTHER_PATH = "/other";

  /** One method's timers, one per status code, each made on its first call. */
  private final class Method {
    final String label;
    /** Set once per code; two threads that both register it get the same timer from the registry. */
    final AtomicReferenceArray<Timer> byCode = new AtomicReferenceArray<>(CODES.length + 1);

    Method(String path) {
      this.label = path.substring(path.lastIndexOf('/') + 1);
    }

    Timer timer(int code) {
      Timer t = byCode.get(code);
      if (t == null) {
        t = Timer.builder("tabula.grpc.requests")
            .description("gRPC calls answered, by method and status code, from arrival to the answer's end")
            .tag("method", label).tag("code", code < CODES.length ? CODES[code] : "UNKNOWN")
            .serviceLevelObjectives(BUCKETS).distributionStatisticBufferLength(1).register(registry);
        byCode.set(code, t);
      }
      return t;
    }
  }

  /** Whether calls are timed now: an operator may pause it at run time ({@code POST /metrics/recording}). */
  private volatile boolean recording = true;

  /** Pauses ({@code false}) or resumes the timing of calls. */
  public void recording(boolean on) {
    recording = on;
  }

  public boolean recording() {
    return recording;
  }

  /** The services' methods ({@link KnownMethods}) are labelled by name; any other path as "other". */
  public GrpcMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** {@code handler}, its calls timed. */
  public Function<HttpRequest, CompletionStage<HttpResponse>> timed(
      Function<HttpRequest, CompletionStage<HttpResponse>> handler) {
    return request -> {
      if (!recording) {
        return handler.apply(request);
      }
      long start = System.nanoTime();
      String path = request.getUri().path();
      Method method = methods.computeIfAbsent(KnownMethods.has(path) ? path : OTHER_PATH, Method::new);
      CompletionStage<HttpResponse> answer = null;
      try {
        answer = handler.apply(request);
      } finally {
        if (answer == null) {
          record(method, INTERNAL, start); // the handler threw: Pekko HTTP answers 500
        }
      }
      return answer.handle((response, err) -> {
        if (err != null) {
          record(method, INTERNAL, start);
          throw err instanceof CompletionException c ? c : new CompletionException(err);
        }
        return observed(response, method, start);
      });
    };
  }

  @SuppressWarnings({"unchecked", "rawtypes"}) // Pekko's Scala entity takes its parts as a Scala Source of Any
  private HttpResponse observed(HttpResponse response, Method method, long start) {
    Optional<String> inHeaders = status(response.getHeaders());
    if (inHeaders.isPresent()) {
      record(method, inHeaders.get(), start);
      return response;
    }
    Optional<Trailer> trailer = response.getAttribute(AttributeKeys.trailer);
    if (trailer.isPresent()) {
      record(method, trailerStatus(trailer.get()).orElse("0"), start);
      return response;
    }
    HttpEntity entity = response.entity();
    if (entity instanceof org.apache.pekko.http.scaladsl.model.HttpEntity.Chunked chunked) {
      // Written by the stream's map stage, read when the stream ends: one fused stage, one thread at a time.
      String[] code = {"0"};
      Source<org.apache.pekko.http.scaladsl.model.HttpEntity.ChunkStreamPart, ?> parts = chunked.getChunks()
          .map(c -> {
            if (c.isLastChunk()) {
              status(c.getTrailerHeaders()).ifPresent(s -> code[0] = s);
            }
            return (org.apache.pekko.http.scaladsl.model.HttpEntity.ChunkStreamPart) c;
          })
          .watchTermination((mat, done) -> {
            // A client that cancels ends the stream without a failure; a failure is the node's.
            done.whenComplete((ok, err) -> record(method, err == null ? code[0] : INTERNAL, start));
            return mat;
          });
      return response.withEntity(chunked.copy(chunked.contentType(), (org.apache.pekko.stream.scaladsl.Source) parts
          .asScala()));
    }
    // No gRPC status at all: not a gRPC answer (a path no service serves is HTTP 404).
    record(method, response.status().intValue() == 404 ? UNIMPLEMENTED : response.status().isSuccess() ? "0"
        : UNKNOWN, start);
    return response;
  }

  /** The status in a trailer (only Pekko's Scala side of it shows its headers). */
  private static Optional<String> trailerStatus(Trailer t) {
    if (t instanceof org.apache.pekko.http.scaladsl.model.Trailer s) {
      scala.collection.Iterator<scala.Tuple2<String, String>> it = s.headers().iterator();
      while (it.hasNext()) {
        scala.Tuple2<String, String> h = it.next();
        if (h._1().equalsIgnoreCase("grpc-status")) {
          return Optional.of(h._2());
        }
      }
    }
    return Optional.empty();
  }

  private static Optional<String> status(Iterable<HttpHeader> headers) {
    for (HttpHeader h : headers) {
      if (h.is("grpc-status")) {
        return Optional.of(h.value());
      }
    }
    return Optional.empty();
  }

  private static void record(Method method, String status, long start) {
    int code = CODES.length; // UNKNOWN, unless the status is one of gRPC's codes
    if (status.length() == 1 && status.charAt(0) >= '0' && status.charAt(0) <= '9') {
      code = status.charAt(0) - '0';
    } else if (status.length() == 2 && status.charAt(0) == '1' && status.charAt(1) >= '0' && status.charAt(1) <= '6') {
      code = 10 + status.charAt(1) - '0';
    }
    method.timer(code).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
  }
}
