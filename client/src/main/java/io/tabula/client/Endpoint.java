package io.tabula.client;

import com.google.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.bigtable.v2.BigtableClient;
import io.tabula.protocol.groups.LocalityGroupsClient;
import io.tabula.protocol.locations.LocationsClient;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.grpc.GrpcChannel;
import org.apache.pekko.grpc.GrpcClientSettings;

/**
 * The connections to one node, {@code host:port}, in plaintext or over TLS with a token as
 * the client's {@link ChannelSecurity} says (the same for every node): two grpc-java
 * channels that the data calls answered whole take turns over ({@link DirectCalls}; their listeners run on
 * the channels' I/O threads, which hand each finished call to the actor system's dispatcher), a Pekko gRPC
 * channel whose calls carry the per-attempt deadline (locations, admin, locality groups) and two without,
 * which scans take turns over (a scan lasts as long as its reader wants). A channel
 * reconnects by itself when the node comes back. Owns the channels; {@link #close} closes
 * them.
 */
final class Endpoint {
  final String address;
  private final Turns<BigtableClient> streaming;
  final LocationsClient locations;
  final BigtableTableAdminClient admin;
  final LocalityGroupsClient groups;
  /** Calls answered whole, on grpc-java channels of their own ({@link #DIRECT_CONNECTIONS}). */
  final DirectCalls direct;
  private final List<ManagedChannel> directChannels;
  private final GrpcChannel unaryChannel;
  private final List<GrpcChannel> streamChannels;

  private Endpoint(String address, GrpcChannel unaryChannel, List<GrpcChannel> streamChannels,
      List<ManagedChannel> directChannels, Duration attemptTimeout, ChannelSecurity security,
      ClassicActorSystemProvider system) {
    this.address = address;
    this.directChannels = directChannels;
    this.direct = new DirectCalls(new TakingTurns(directChannels), attemptTimeout, security.callOptions(),
        system.classicSystem().dispatcher());
    this.unaryChannel = unaryChannel;
    this.streamChannels = streamChannels;
    this.streaming = new Turns<>(streamChannels.stream().map(c -> BigtableClient.create(c, system)).toList());
    this.locations = LocationsClient.create(unaryChannel, system);
    this.admin = BigtableTableAdminClient.create(unaryChannel, system);
    this.groups = LocalityGroupsClient.create(unaryChannel, system);
  }

  /** The client for the next scan: scans take turns over {@link #CONNECTIONS} connections. */
  BigtableClient streaming() {
    return streaming.next();
  }

  /**
   * Connections to the node for scans: a node serves each HTTP/2 connection on one thread at
   * a time, so over one connection scans used about one of the node's cores whatever it had
   * (160,000 rows/s with one connection, about 250,000 with two, on 2 cores shared with the
   * client; bench/run-e2e --workloads seq-write,random-read,random-read-mem,scan).
   */
  private static final int CONNECTIONS = 2;

  /**
   * Connections for calls answered whole (writes, reads of a few rows), for the same reason:
   * since the node answers small calls without per-call streams, one connection's thread was
   * what held its point reads back (hot-set reads 105,000 values/s over one connection,
   * 129,000 over two; bench/run-e2e --clients tabula --concurrency 16 --workloads
   * seq-write,random-read,random-read-mem,seq-read).
   */
  private static final int DIRECT_CONNECTIONS = 2;

  /** Items handed out in turn, from any thread. */
  private static final class Turns<T> {
    private final List<T> items;
    private final AtomicInteger next = new AtomicInteger();

    Turns(List<T> items) {
      this.items = List.copyOf(items);
    }

    T next() {
      return items.get(Math.floorMod(next.getAndIncrement(), items.size()));
    }

    T first() {
      return items.get(0);
    }
  }

  /** A channel whose calls take turns over several connections. */
  private static final class TakingTurns extends Channel {
    private final Turns<ManagedChannel> channels;

    TakingTurns(List<ManagedChannel> channels) {
      this.channels = new Turns<>(channels);
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
      return channels.next().newCall(method, options);
    }

    @Override
    public String authority() {
      return channels.first().authority();
    }
  }

  /** The initial HTTP/2 flow-control window of the Pekko gRPC channels (scans). */
  private static final int SCAN_WINDOW_BYTES = 4 << 20;

  /** Opens the channels to {@code address}, each with {@code security}'s TLS and token. */
  static Endpoint open(String address, Duration attemptTimeout, ChannelSecurity security,
      ClassicActorSystemProvider system) {
    HostPort hp = HostPort.parse(address);
    // The channels' listeners run on their I/O threads: they only hand messages to a stream
    // or a future, and a hand-over to an executor thread per message cost more than that.
    // A scan's HTTP/2 window starts at 4 MiB (grpc-java still tunes it): with the default
    // 1 MiB, scans spent much of their time waiting for window updates (about 100,000 rows/s
    // against 160,000, bench/run-e2e --workloads seq-write,scan); a paused scan holds up to
    // about that much in the client's buffers.
    GrpcClientSettings base = GrpcClientSettings.connectToServiceAt(hp.host(), hp.port(), system)
        .withTls(security.tls())
        .withConnectionAttempts(-1)
        .withChannelBuilderOverrides(b -> b.directExecutor().initialFlowControlWindow(SCAN_WINDOW_BYTES));
    if (security.tls()) {
      base = base.withTrustManager(security.trust());
    }
    if (security.credentials() != null) {
      base = base.withCallCredentials(security.credentials());
    }
    List<ManagedChannel> direct = new ArrayList<>();
    for (int i = 0; i < DIRECT_CONNECTIONS; i++) {
      NettyChannelBuilder b = security.tls()
          ? NettyChannelBuilder.forAddress(hp.host(), hp.port(), security.channelCredentials())
          : NettyChannelBuilder.forAddress(hp.host(), hp.port()).usePlaintext();
      direct.add(b.directExecutor().build());
    }
    List<GrpcChannel> scans = new ArrayList<>();
    for (int i = 0; i < CONNECTIONS; i++) {
      scans.add(GrpcChannel.apply(base, system));
    }
    return new Endpoint(hp.toString(), GrpcChannel.apply(base.withDeadline(attemptTimeout), system), scans, direct,
        attemptTimeout, security, system);
  }

  CompletionStage<Void> close() {
    directChannels.forEach(ManagedChannel::shutdown);
    List<CompletableFuture<?>> closing = new ArrayList<>();
    closing.add(unaryChannel.closeCS().toCompletableFuture());
    streamChannels.forEach(c -> closing.add(c.closeCS().toCompletableFuture()));
    return CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new));
  }

  /** A {@code host:port} endpoint address, checked. */
  record HostPort(String host, int port) {
    static HostPort parse(String address) {
      int colon = address == null ? -1 : address.lastIndexOf(':');
      if (colon <= 0 || colon == address.length() - 1) {
        throw new IllegalArgumentException("endpoint '" + address + "' is not of the form host:port");
      }
      int port;
      try {
        port = Integer.parseInt(address.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("endpoint '" + address + "' has no numeric port", e);
      }
      if (port < 1 || port > 65_535) {
        throw new IllegalArgumentException("endpoint '" + address + "': port must be 1..65535");
      }
      return new HostPort(address.substring(0, colon), port);
    }

    @Override
    public String toString() {
      return host + ":" + port;
    }
  }
}
