package io.tabula.bench.e2e;

import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import com.google.api.gax.batching.Batcher;
import com.google.api.gax.rpc.ServerStream;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.GCRules;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.RowMutationEntry;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.tabula.bench.Dataset;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Google's official Java client used the plain way, reaching its server as an {@link
 * OfficialEndpoint} says (in bench/run-plain, the settings a new user starts from: {@code
 * newBuilderForEmulator} for 127.0.0.1, only its metrics exporters off, which would otherwise
 * try to reach Google): {@code mutateRowAsync}, {@code readRowAsync}, {@code
 * newBulkMutationBatcher} with its defaults and {@code readRows} of the whole table.
 */
final class OfficialPlainClient implements PlainClient {
  private static final ByteString QUALIFIER_BYTES = ByteString.copyFromUtf8(QUALIFIER);

  private final BigtableDataClient client;
  private final BigtableTableAdminClient admin;
  private final Dataset data;
  private final Checks checks;

  OfficialPlainClient(OfficialEndpoint endpoint, Dataset data) throws IOException {
    this.client = BigtableDataClient.create(endpoint.dataSettings().build());
    this.admin = endpoint.admin();
    this.data = data;
    this.checks = new Checks(data);
  }

  @Override
  public String name() {
    return "official client";
  }

  @Override
  public String api(PlainWorkload w) {
    return switch (w) {
      case SEQ_UNARY_WRITE, RANDOM_UNARY_WRITE -> "`mutateRowAsync`";
      case SEQ_LOAD, RANDOM_LOAD -> "`newBulkMutationBatcher` defaults";
      case RANDOM_UNARY_READ, SEQ_UNARY_READ -> "`readRowAsync`";
      case SCAN -> "`readRows(Query.create(table))`";
      case LONE_WRITE -> "`mutateRow`";
      case LONE_READ -> "`readRow`";
    };
  }

  @Override
  public void createTable(String table) {
    admin.createTable(CreateTableRequest.of(table).addFamily(FAMILY, GCRules.GCRULES.maxVersions(1)));
  }

  private RowMutationEntry entry(int row) {
    return RowMutationEntry.create(UnsafeByteOperations.unsafeWrap(data.key(row)))
        .setCell(FAMILY, QUALIFIER_BYTES, TIMESTAMP_MICROS, UnsafeByteOperations.unsafeWrap(data.value(row)));
  }

  @Override
  public CompletionStage<Integer> mutateRow(String table, int row) {
    RowMutation m = RowMutation.create(TableId.of(table), UnsafeByteOperations.unsafeWrap(data.key(row)))
        .setCell(FAMILY, QUALIFIER_BYTES, TIMESTAMP_MICROS, UnsafeByteOperations.unsafeWrap(data.value(row)));
    return OfficialClientUnderTest.stage(client.mutateRowAsync(m)).thenApply(x -> 1);
  }

  @Override
  public CompletionStage<Integer> readRow(String table, int row) {
    return OfficialClientUnderTest.stage(client.readRowAsync(TableId.of(table), UnsafeByteOperations.unsafeWrap(data.key(row))))
        .thenApply(got -> {
          if (got == null) {
            throw new IllegalStateException(name() + ": row " + row + " is missing");
          }
          if (check(got) != row) {
            throw new IllegalStateException(name() + ": asked for row " + row + ", got " + got.getKey().toStringUtf8());
          }
          return 1;
        });
  }

  @Override
  public InFlight.Result load(String table, int[] order, int batch, int inFlight) throws Exception {
    InFlight.Latencies latencies = new InFlight.Latencies();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch answered = new CountDownLatch(order.length);
    long start = System.nanoTime();
    latencies.started(start);
    try (Batcher<RowMutationEntry, Void> batcher = client.newBulkMutationBatcher(TableId.of(table))) {
      for (int i = 0; i < order.length && failure.get() == null; i++) {
        long t0 = System.nanoTime();
        ApiFutures.addCallback(batcher.add(entry(order[i])), new ApiFutureCallback<Void>() {
          @Override
          public void onSuccess(Void v) {
            latencies.add(System.nanoTime() - t0);
            answered.countDown();
          }

          @Override
          public void onFailure(Throwable t) {
            failure.compareAndSet(null, t);
            answered.countDown();
          }
        }, MoreExecutors.directExecutor());
      }
    }
    // close() returns once every entry is resolved; the callbacks may still be finishing.
    if (failure.get() == null && !answered.await(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException(name() + ": batched writes were not answered within 60 s of closing");
    }
    long nanos = System.nanoTime() - start;
    if (failure.get() != null) {
      throw new IllegalStateException(name() + ": a batched write failed", failure.get());
    }
    return new InFlight.Result(order.length, nanos, latencies.sorted(), latencies.longestGap());
  }

  @Override
  public void scan(String table, int rows) {
    ServerStream<Row> stream = client.readRows(Query.create(TableId.of(table)));
    int next = 0;
    for (Row row : stream) {
      int r = check(row);
      if (r != next) {
        stream.cancel();
        throw new IllegalStateException(name() + ": scan returned row " + r + " where row " + next + " was next");
      }
      next++;
    }
    Checks.scanned(name(), 0, rows, next);
  }

  private int check(Row row) {
    int r = Checks.rowOf(row.getKey());
    List<RowCell> cells = row.getCells();
    if (cells.size() != 1) {
      throw new IllegalStateException(name() + ": row " + r + " has " + cells.size() + " cells, expected 1");
    }
    checks.value(name(), r, cells.get(0).getValue());
    return r;
  }

  @Override
  public void close() {
    try (BigtableDataClient d = client) {
      admin.close();
    }
  }
}
