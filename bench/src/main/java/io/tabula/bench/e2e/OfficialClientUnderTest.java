package io.tabula.bench.e2e;

import com.google.api.core.ApiFunction;
import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import com.google.api.gax.grpc.ChannelPoolSettings;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.api.gax.rpc.ResponseObserver;
import com.google.api.gax.rpc.StreamController;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.GCRules;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.cloud.bigtable.data.v2.models.RowMutationEntry;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.Codec;
import io.grpc.DecompressorRegistry;
import io.grpc.ManagedChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tabula.bench.Dataset;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Google's official Java client ({@code google-cloud-bigtable}) reaching a server on 127.0.0.1
 * as an {@link OfficialEndpoint} says (in the end-to-end benchmarks, the emulator's settings,
 * without credentials or metrics): writes with {@code bulkMutateRowsAsync} (one MutateRows),
 * reads with a multi-key {@code Query} through {@code readRowsCallable().all()} (one
 * ReadRows), scans with {@code readRowsAsync} of a key range, counted as rows arrive.
 */
final class OfficialClientUnderTest implements ClientUnderTest {
  private static final String NAME = "official client";
  private static final ByteString QUALIFIER_BYTES = ByteString.copyFromUtf8(QUALIFIER);

  private final BigtableDataClient client;
  private final BigtableTableAdminClient admin;
  private final Dataset data;
  private final Checks checks;
  private final boolean acceptGzip;

  /**
   * @param acceptGzip whether the client advertises gzip in {@code grpc-accept-encoding}, as
   *     the library does by default; without it the node answers uncompressed
   * @param flowControlWindow the HTTP/2 receive window of the client's connection in bytes, or 0
   *     for the library's default (1 MiB)
   * @param channels connections in the client's channel pool
   */
  OfficialClientUnderTest(OfficialEndpoint endpoint, Dataset data, boolean acceptGzip, int flowControlWindow,
      int channels) throws IOException {
    BigtableDataSettings.Builder settings = endpoint.dataSettings();
    InstantiatingGrpcChannelProvider.Builder channel =
        ((InstantiatingGrpcChannelProvider) settings.stubSettings().getTransportChannelProvider()).toBuilder();
    ApiFunction<ManagedChannelBuilder, ManagedChannelBuilder> given = channel.getChannelConfigurator();
    settings.stubSettings().setTransportChannelProvider(channel.setChannelConfigurator(b -> {
      ManagedChannelBuilder configured = given == null ? b : given.apply(b);
      if (!acceptGzip) {
        configured.decompressorRegistry(DecompressorRegistry.emptyInstance().with(Codec.Identity.NONE, false));
      }
      if (flowControlWindow > 0 && configured instanceof NettyChannelBuilder netty) {
        netty.flowControlWindow(flowControlWindow);
      }
      return configured;
    }).setChannelPoolSettings(ChannelPoolSettings.staticallySized(channels)).build());
    this.client = BigtableDataClient.create(settings.build());
    this.acceptGzip = acceptGzip;
    this.admin = endpoint.admin();
    this.data = data;
    this.checks = new Checks(data);
  }

  @Override
  public String name() {
    return acceptGzip ? NAME : NAME + " (no gzip)";
  }

  @Override
  public String writeApi() {
    return "`bulkMutateRowsAsync(BulkMutation)` (one MutateRows)";
  }

  @Override
  public String readApi() {
    return "`readRowsCallable().all()` of a multi-key `Query` (one ReadRows)";
  }

  @Override
  public String scanApi() {
    return "`readRowsAsync(Query.range(..))` (one streamed ReadRows)";
  }

  @Override
  public void createTable(String table) {
    admin.createTable(CreateTableRequest.of(table).addFamily(FAMILY, GCRules.GCRULES.maxVersions(1)));
  }

  @Override
  public CompletionStage<Integer> write(String table, int[] rows, int from, int to) {
    BulkMutation batch = BulkMutation.create(TableId.of(table));
    for (int i = from; i < to; i++) {
      batch.add(RowMutationEntry.create(UnsafeByteOperations.unsafeWrap(data.key(rows[i])))
          .setCell(FAMILY, QUALIFIER_BYTES, TIMESTAMP_MICROS, UnsafeByteOperations.unsafeWrap(data.value(rows[i]))));
    }
    return stage(client.bulkMutateRowsAsync(batch)).thenApply(x -> to - from);
  }

  @Override
  public CompletionStage<Integer> read(String table, int[] rows, int from, int to) {
    Query q = Query.create(TableId.of(table));
    for (int i = from; i < to; i++) {
      q.rowKey(UnsafeByteOperations.unsafeWrap(data.key(rows[i])));
    }
    return stage(client.readRowsCallable().all().futureCall(q))
        .thenApply(got -> Checks.readBack(NAME, rows, from, to, got, this::check));
  }

  @Override
  public CompletionStage<Integer> scan(String table, int fromRow, int toRow) {
    Query q = Query.create(TableId.of(table)).range(UnsafeByteOperations.unsafeWrap(data.key(fromRow)),
        UnsafeByteOperations.unsafeWrap(data.key(toRow)));
    CompletableFuture<Integer> done = new CompletableFuture<>();
    client.readRowsAsync(q, new ResponseObserver<>() {
      private StreamController controller;
      private int count;
      private int next = fromRow;

      @Override
      public void onStart(StreamController controller) {
        this.controller = controller;
      }

      @Override
      public void onResponse(Row row) {
        try {
          int r = check(row);
          if (r != next) {
            throw new IllegalStateException(NAME + ": scan returned row " + r + " where row " + next + " was next");
          }
          next = r + 1;
          count++;
        } catch (IllegalStateException e) {
          done.completeExceptionally(e);
          controller.cancel();
        }
      }

      @Override
      public void onError(Throwable t) {
        done.completeExceptionally(t);
      }

      @Override
      public void onComplete() {
        try {
          Checks.scanned(NAME, fromRow, toRow, count);
          done.complete(count);
        } catch (IllegalStateException e) {
          done.completeExceptionally(e);
        }
      }
    });
    return done;
  }

  private int check(Row row) {
    int r = Checks.rowOf(row.getKey());
    List<RowCell> cells = row.getCells();
    if (cells.size() != 1) {
      throw new IllegalStateException(NAME + ": row " + r + " has " + cells.size() + " cells, expected 1");
    }
    checks.value(NAME, r, cells.get(0).getValue());
    return r;
  }

  /** {@code f} as a stage, completed on the thread that completes {@code f}. */
  static <T> CompletionStage<T> stage(ApiFuture<T> f) {
    CompletableFuture<T> out = new CompletableFuture<>();
    ApiFutures.addCallback(f, new ApiFutureCallback<T>() {
      @Override
      public void onSuccess(T value) {
        out.complete(value);
      }

      @Override
      public void onFailure(Throwable t) {
        out.completeExceptionally(t);
      }
    }, MoreExecutors.directExecutor());
    return out;
  }

  @Override
  public void close() {
    try (BigtableDataClient d = client) {
      admin.close();
    }
  }
}
