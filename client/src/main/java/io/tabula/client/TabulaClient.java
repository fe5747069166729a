package io.tabula.client;

import com.google.bigtable.v2.CheckAndMutateRowRequest;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.ReadModifyWriteRowRequest;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import javax.net.ssl.X509TrustManager;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.AsPublisher;
import org.apache.pekko.stream.javadsl.JavaFlowSupport;
import org.apache.pekko.stream.javadsl.Source;

/**
 * The Tabula Java client (paper §2, Figures 2 and 3): writes and reads of rows, atomic
 * single-row check-and-mutate and read-modify-write, and scans and a table's change stream as
 * back-pressured reactive streams, over the Cloud Bigtable v2 API of a Tabula node.
 * <pre>{@code
 * try (TabulaClient client = TabulaClient.builder().endpoint("127.0.0.1:8086").build()) {
 *   client.apply("webtable", RowMutation.create("com.cnn.www").setCell("anchor", "www.c-span.org", "CNN"))
 *       .toCompletableFuture().join();
 *   Flow.Publisher<Row> rows = client.scan(Query.table("webtable").prefix("com.cnn.").families("anchor"));
 * }
 * }</pre>
 * Each request goes to the node the {@linkplain LocationCache location cache} names for its
 * row. Idempotent operations (reads, and mutations whose cells all carry timestamps) are
 * retried with backoff under {@link RetrySettings}; a stale route is always retried, as
 * the node applied nothing. Every failure reaches the caller as a {@link TabulaException}.
 *
 * <p>Over TLS and with a bearer token when the builder is given them ({@link Builder#tls(Path)},
 * {@link Builder#token}): every connection to every node, the seed's and those its Locations
 * service names, then trusts the same CA and carries the same token.
 *
 * <p>Runs in an {@code ActorSystem} given to the builder (which the caller keeps owning),
 * or in one of its own that {@link #close} terminates. Thread-safe.
 */
public final class TabulaClient implements AutoCloseable {
  /** Where a single node started with its defaults listens. */
  public static final String DEFAULT_ENDPOINT = "127.0.0.1:8086";

  private final ClassicActorSystemProvider system;
  private final boolean ownsSystem;
  private final Materializer materializer;
  private final String instanceName;
  private final String seed;
  private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();
  private final RetrySettings retry;
  private final ChannelSecurity security;
  private final Retrier retrier;
  private final LocationCache locations;
  private final Batches batches;
  private final TabulaAdmin admin;
  private volatile boolean closed;

  private TabulaClient(Builder b) {
    this.ownsSystem = b.system == null;
    this.system = ownsSystem ? ActorSystem.create("tabula-client", standaloneConfig()) : b.system;
    this.materializer = Materializer.matFromSystem(system);
    this.instanceName = "projects/" + b.project + "/instances/" + b.instance;
    this.seed = Endpoint.HostPort.parse(b.endpoint).toString();
    this.retry = b.retry;
    this.security = new ChannelSecurity(b.trust, b.token == null ? null : new TokenCredentials(b.token));
    this.retrier = new Retrier(b.retry, system.classicSystem().dispatcher());
    this.locations = new LocationCache(seed, this::endpoint, b.prefetch);
    this.batches = new Batches(this, retrier, b.batchEntries, b.batchBytes, b.batchConcurrency);
    this.admin = new TabulaAdmin(this, retrier);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A client of the node at {@code endpoint} ({@code host:port}) with every default. */
  public static TabulaClient connect(String endpoint) {
    return builder().endpoint(endpoint).build();
  }

  /** Table administration through the same connections. */
  public TabulaAdmin admin() {
    return admin;
  }

  /** The full Cloud Bigtable name of a table id: projects/{project}/instances/{instance}/tables/{table}. */
  public String tableName(String tableId) {
    Objects.requireNonNull(tableId, "table");
    if (tableId.isEmpty() || tableId.contains("/")) {
      throw new IllegalArgumentException("table id '" + tableId + "' must be non-empty and contain no '/'");
    }
    return instanceName + "/tables/" + tableId;
  }

  String instanceName() {
    return instanceName;
  }

  // ---- writes

  /** Applies one row's mutations atomically. */
  public CompletionStage<Void> apply(String table, RowMutation mutation) {
    String name = tableName(table);
    MutateRowRequest.Builder b = MutateRowRequest.newBuilder().setTableName(name).setRowKey(mutation.key())
        .addAllMutations(mutation.toProto());
    com.google.bigtable.v2.Idempotency token = mutation.newIdempotency();
    if (token != null) {
      b.setIdempotency(token); // one for this application, sent with each of its attempts
    }
    MutateRowRequest req = b.build();
    return onRow(name, mutation.key(), mutation.isIdempotent(),
        (ep, tablet) -> ep.direct.unary(DirectCalls.MUTATE_ROW, req, tablet)).thenApply(r -> null);
  }

  /**
   * Applies many rows' mutations, each row atomically and independently (§3), and
   * completes with one result per mutation in the order given. Rows are sent in
   * MutateRows batches; entries that fail with a retryable code are retried if idempotent.
   */
  public CompletionStage<List<MutationResult>> applyBatch(String table, List<RowMutation> mutations) {
    return batches.apply(tableName(table), List.copyOf(mutations));
  }

  /** Applies the matching branch of {@code cam} atomically; completes with whether the predicate matched. */
  public CompletionStage<Boolean> checkAndMutate(String table, CheckAndMutate cam) {
    String name = tableName(table);
    CheckAndMutateRowRequest req = CheckAndMutateRowRequest.newBuilder().setTableName(name).setRowKey(cam.key())
        .setPredicateFilter(cam.predicate().toProto()).addAllTrueMutations(cam.onMatch())
        .addAllFalseMutations(cam.otherwise()).build();
    return onRow(name, cam.key(), false, (ep, tablet) -> ep.direct.unary(DirectCalls.CHECK_AND_MUTATE_ROW, req, tablet))
        .thenApply(r -> r.getPredicateMatched());
  }

  /** Applies the rules atomically; completes with the cells they wrote. */
  public CompletionStage<Row> readModifyWrite(String table, ReadModifyWrite rmw) {
    String name = tableName(table);
    ReadModifyWriteRowRequest req = ReadModifyWriteRowRequest.newBuilder().setTableName(name).setRowKey(rmw.key())
        .addAllRules(rmw.toProto()).build();
    return onRow(name, rmw.key(), false, (ep, tablet) -> ep.direct.unary(DirectCalls.READ_MODIFY_WRITE_ROW, req, tablet))
        .thenApply(r -> Rows.fromProto(r.getRow()));
  }

  // ---- reads

  public CompletionStage<Optional<Row>> readRow(String table, String key) {
    return readRow(table, Bytes.of(key, "key"), null);
  }

  /** One row with only the cells {@code filter} passes (null for all); empty if it has none. */
  public CompletionStage<Optional<Row>> readRow(String table, ByteString key, Filter filter) {
    String name = tableName(table);
    ReadRowsRequest.Builder b = ReadRowsRequest.newBuilder().setTableName(name)
        .setRows(RowSet.newBuilder().addRowKeys(Bytes.key(key))).setRowsLimit(1);
    if (filter != null) {
      b.setFilter(filter.toProto());
    }
    ReadRowsRequest req = b.build();
    return onRow(name, key, true, (ep, tablet) -> ep.direct.gather(DirectCalls.READ_ROWS, req, tablet)).thenApply(responses -> {
          List<Row> rows = merged(responses, false);
          return rows.isEmpty() ? Optional.<Row>empty() : Optional.of(rows.get(0));
        });
  }

  /**
   * The query's rows as a Pekko {@code Source}: nothing is read until it is run, demand
   * travels to the node (gRPC flow control), and a stream broken by a retryable failure
   * resumes after the last row delivered.
   */
  public Source<Row, NotUsed> source(Query query) {
    ReadRowsRequest req = query.toRequest(tableName(query.tableId()));
    return Source.lazySource(() -> new Scan(this, req, retrier).rows()).mapMaterializedValue(m -> NotUsed.getInstance());
  }

  /**
   * The query's rows as a {@code java.util.concurrent.Flow.Publisher} for one subscriber:
   * it never receives more rows than it requested, and cancelling stops the read on the node.
   */
  public Flow.Publisher<Row> scan(Query query) {
    return source(query).runWith(JavaFlowSupport.Sink.asPublisher(AsPublisher.WITHOUT_FANOUT), materializer);
  }

  // ---- change streams

  /**
   * Every change of table {@code table} committed from {@code from} on, as they are committed,
   * as a Pekko {@code Source} that never completes by itself ({@link #changeSource(String,
   * Instant, Instant)} for one that ends). The table must keep a change stream ({@link
   * TabulaAdmin#setChangeStreamRetention}), and {@code from} be within its retention.
   */
  public Source<Change, NotUsed> changeSource(String table, Instant from) {
    return changes(table, from, null);
  }

  /**
   * The changes of table {@code table} committed from {@code from} up to {@code until}
   * (exclusive); completes once every partition of the table has reached {@code until}.
   *
   * <p>Nothing is read until the source is run. Then every partition of the table is read
   * (docs/change-streams.md), and its changes come in commit order per row: a partition that
   * splits or merges goes on as the partitions it became, a change whose value came in pieces
   * arrives whole, and a partition's call that fails with a retryable code resumes after the last
   * change or heartbeat it saw, under the client's {@link RetrySettings} (counted afresh after
   * each message received). Demand is back-pressured to each partition's call; cancelling
   * cancels them all.
   */
  public Source<Change, NotUsed> changeSource(String table, Instant from, Instant until) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(until, "until");
    if (!until.isAfter(from)) {
      throw new IllegalArgumentException("until " + until + " must be after from " + from);
    }
    return changes(table, from, until);
  }

  /** {@link #changeSource(String, Instant)} as a {@code Flow.Publisher} for one subscriber. */
  public Flow.Publisher<Change> readChangeStream(String table, Instant from) {
    return changeSource(table, from).runWith(JavaFlowSupport.Sink.asPublisher(AsPublisher.WITHOUT_FANOUT),
        materializer);
  }

  /** {@link #changeSource(String, Instant, Instant)} as a {@code Flow.Publisher} for one subscriber. */
  public Flow.Publisher<Change> readChangeStream(String table, Instant from, Instant until) {
    return changeSource(table, from, until).runWith(JavaFlowSupport.Sink.asPublisher(AsPublisher.WITHOUT_FANOUT),
        materializer);
  }

  private Source<Change, NotUsed> changes(String table, Instant from, Instant until) {
    String name = tableName(table);
    Objects.requireNonNull(from, "from");
    return Source.lazySource(() -> new ChangeStream(this, retrier, name, from, until).changes())
        .mapMaterializedValue(m -> NotUsed.getInstance());
  }

  /**
   * Every row of the query, gathered in memory (for small reads, such as a batch of keys):
   * one ReadRows call with the per-attempt deadline, the whole call retried on a retryable
   * failure, without the machinery a resumable stream needs.
   */
  public CompletionStage<List<Row>> readRows(Query query) {
    String name = tableName(query.tableId());
    ReadRowsRequest req = query.toRequest(name);
    RowSet rows = req.getRows();
    if (rows.getRowRangesCount() == 0 && rows.getRowKeysCount() > 1 && req.getRowsLimit() == 0) {
      return readKeysByNode(name, req);
    }
    return readFrom(name, req);
  }

  /** One ReadRows call to the node holding the request's first row, retried whole. */
  private CompletionStage<List<Row>> readFrom(String name, ReadRowsRequest req) {
    ByteString first = Scan.firstRow(req.getRows());
    return retrier.run(true, n -> locations.locate(name, first).thenCompose(l -> endpoint(l.endpoint()).direct
        .gather(DirectCalls.READ_ROWS, req, null)), err -> forget(name, first, err))
        .thenApply(responses -> merged(responses, req.getReversed()));
  }

  /**
   * A read of several row keys (paper §5.1: the client reaches each tablet's server itself):
   * the keys are grouped by the node the location cache says serves them, each node is
   * asked for its keys only, at once, and the rows come back in key order (reversed if
   * asked). A node then reads its own tablets, instead of asking other nodes for theirs.
   */
  private CompletionStage<List<Row>> readKeysByNode(String name, ReadRowsRequest req) {
    List<ByteString> keys = req.getRows().getRowKeysList();
    List<CompletableFuture<LocationCache.Location>> located = new ArrayList<>(keys.size());
    for (ByteString k : keys) {
      located.add(locations.locate(name, k).toCompletableFuture());
    }
    return CompletableFuture.allOf(located.toArray(CompletableFuture[]::new)).handle((x, err) -> {
      if (err != null) {
        return readFrom(name, req);
      }
      Map<String, List<ByteString>> byNode = new java.util.LinkedHashMap<>();
      for (int i = 0; i < keys.size(); i++) {
        byNode.computeIfAbsent(located.get(i).join().endpoint(), e -> new ArrayList<>()).add(keys.get(i));
      }
      if (byNode.size() == 1) {
        return readFrom(name, req);
      }
      List<CompletableFuture<List<Row>>> parts = new ArrayList<>();
      for (List<ByteString> group : byNode.values()) {
        parts.add(readFrom(name, req.toBuilder().setRows(RowSet.newBuilder().addAllRowKeys(group)).build())
            .toCompletableFuture());
      }
      return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(y -> {
        List<Row> all = new ArrayList<>();
        parts.forEach(p -> all.addAll(p.join()));
        java.util.Comparator<Row> byKey = (a, b) -> Bytes.compare(a.key(), b.key());
        all.sort(req.getReversed() ? byKey.reversed() : byKey);
        return all;
      });
    }).thenCompose(stage -> stage);
  }

  private static List<Row> merged(List<ReadRowsResponse> responses, boolean reversed) {
    RowMerger merger = new RowMerger(reversed);
    List<Row> rows = new ArrayList<>();
    responses.forEach(r -> rows.addAll(merger.accept(r)));
    merger.finish();
    return rows;
  }

  // ---- plumbing shared with Scan, Batches and TabulaAdmin

  Materializer materializer() {
    return materializer;
  }

  LocationCache locations() {
    return locations;
  }

  Endpoint endpoint(String address) {
    if (closed) {
      throw new TabulaException(Status.Code.CANCELLED, "the client is closed");
    }
    return endpoints.computeIfAbsent(address, a -> Endpoint.open(a, retry.attemptTimeout(), security,
        system));
  }

  Endpoint seed() {
    return endpoint(seed);
  }

  /** Runs {@code call} against the node holding {@code row}, retried as {@link Retrier} decides. */
  private <T> CompletionStage<T> onRow(String tableName, ByteString row, boolean idempotent,
      BiFunction<Endpoint, String, CompletionStage<T>> call) {
    return retrier.run(idempotent, n -> locations.locate(tableName, row)
        .thenCompose(l -> call.apply(endpoint(l.endpoint()), l.tabletId())), err -> forget(tableName, row, err));
  }

  /** Drops the cached location a failure shows to be wrong. */
  void forget(String tableName, ByteString row, Throwable err) {
    if (Failures.isStaleRoute(err)) {
      locations.invalidate(tableName, row);
      return;
    }
    Status.Code code = Failures.of(err).code();
    if (code == Status.Code.NOT_FOUND) {
      locations.invalidate(tableName);
    } else if (code == Status.Code.UNAVAILABLE) {
      locations.invalidate(tableName, row);
    }
  }

  /** Closes every connection, and terminates the actor system if the client started it. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<CompletableFuture<Void>> closing = new ArrayList<>();
    endpoints.values().forEach(e -> closing.add(e.close().toCompletableFuture()));
    try {
      CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
      if (ownsSystem) {
        system.classicSystem().terminate();
        system.classicSystem().getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new TabulaException(Status.Code.UNKNOWN, "closing the client: " + e, e);
    }
  }

  /** A small local actor system that logs only warnings, over the application's own configuration. */
  private static Config standaloneConfig() {
    return ConfigFactory.parseString("""
        pekko.actor.provider = local
        pekko.loglevel = WARNING
        pekko.stdout-loglevel = WARNING
        pekko.log-dead-letters = off
        pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        # One thread per core: the client's actors and streams only hand data on.
        pekko.actor.default-dispatcher.fork-join-executor.parallelism-min = 2
        pekko.actor.default-dispatcher.fork-join-executor.parallelism-factor = 1.0
        """).withFallback(ConfigFactory.load());
  }

  /**
   * Settings of a client; every one has a default: endpoint {@value #DEFAULT_ENDPOINT},
   * project and instance "tabula", {@link RetrySettings#DEFAULT}, 8 tablets prefetched per
   * location lookup, batches of at most 1,000 entries and 4 MiB with 4 in flight, plaintext
   * and no token.
   */
  public static final class Builder {
    private String endpoint = DEFAULT_ENDPOINT;
    private String project = "tabula";
    private String instance = "tabula";
    private ClassicActorSystemProvider system;
    private RetrySettings retry = RetrySettings.DEFAULT;
    private int prefetch = 8;
    private int batchEntries = 1_000;
    private int batchBytes = 4 << 20;
    private int batchConcurrency = 4;
    private X509TrustManager trust;
    private BearerToken token;

    private Builder() {}

    /** The node to start from, {@code host:port}; the others are learned from its Locations service. */
    public Builder endpoint(String hostPort) {
      Endpoint.HostPort.parse(hostPort);
      this.endpoint = hostPort;
      return this;
    }

    public Builder instance(String project, String instance) {
      this.project = id("project", project);
      this.instance = id("instance", instance);
      return this;
    }

    /** Runs in this actor system, which stays the caller's to terminate. */
    public Builder actorSystem(ClassicActorSystemProvider system) {
      this.system = Objects.requireNonNull(system, "system");
      return this;
    }

    public Builder retry(RetrySettings retry) {
      this.retry = Objects.requireNonNull(retry, "retry");
      return this;
    }

    /** Shorthand for a retry setting with this overall deadline per operation. */
    public Builder deadline(Duration total) {
      this.retry = retry.withTotalTimeout(total).withAttemptTimeout(
          total.compareTo(retry.attemptTimeout()) < 0 ? total : retry.attemptTimeout());
      return this;
    }

    /** How many tablets after the one asked for a location lookup also brings (0 to 100). */
    public Builder prefetch(int tablets) {
      if (tablets < 0 || tablets > 100) {
        throw new IllegalArgumentException("prefetch must be 0..100, was " + tablets);
      }
      this.prefetch = tablets;
      return this;
    }

    /** Bounds of one MutateRows request of {@link #applyBatch}, and how many are sent at once. */
    public Builder batching(int maxEntries, int maxBytes, int concurrency) {
      if (maxEntries < 1 || maxEntries > 100_000 || maxBytes < 1 || concurrency < 1) {
        throw new IllegalArgumentException("batching needs 1..100000 entries, positive bytes and concurrency, got "
            + maxEntries + ", " + maxBytes + ", " + concurrency);
      }
      this.batchEntries = maxEntries;
      this.batchBytes = maxBytes;
      this.batchConcurrency = concurrency;
      return this;
    }

    /**
     * Connects to every node over TLS, accepting a node's certificate if one of the CA
     * certificates in {@code caPemFile} (PEM) signed it and it names the host connected to:
     * the endpoint's, and those the Locations service gives (the nodes' {@code
     * tabula.node.host}). Throws {@link IllegalArgumentException} naming the file if it
     * cannot be read or holds no certificate.
     */
    public Builder tls(Path caPemFile) {
      this.trust = TlsTrust.fromPemFile(caPemFile);
      return this;
    }

    /** Connects to every node over TLS, accepting the certificates {@code trust} accepts (the JDK's, a keystore's). */
    public Builder tls(X509TrustManager trust) {
      this.trust = Objects.requireNonNull(trust, "trust");
      return this;
    }

    /**
     * Sends {@code authorization: Bearer <token>} with every call to every node. Refused with
     * {@link IllegalArgumentException} if empty or holding a character an HTTP header value may
     * not carry ({@link BearerToken#of}). The token is sent only over TLS or to a loopback
     * address: a call to another node in plaintext fails UNAUTHENTICATED before it is sent.
     */
    public Builder token(String token) {
      this.token = BearerToken.of(token);
      return this;
    }

    public TabulaClient build() {
      return new TabulaClient(this);
    }

    private static String id(String what, String id) {
      if (id == null || id.isEmpty() || id.contains("/")) {
        throw new IllegalArgumentException(what + " '" + id + "' must be non-empty and contain no '/'");
      }
      return id;
    }
  }
}
