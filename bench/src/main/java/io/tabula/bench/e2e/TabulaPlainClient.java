package io.tabula.bench.e2e;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.tabula.bench.Dataset;
import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * The Tabula Java client used the plain way: {@code apply} and {@code readRow} of one row,
 * {@code applyBatch} of a batch of rows for loads, and {@code source} of the whole table.
 */
final class TabulaPlainClient implements PlainClient {
  private static final ByteString QUALIFIER_BYTES = ByteString.copyFromUtf8(QUALIFIER);

  private final TabulaClientUnderTest under;
  private final TabulaClient client;
  private final Dataset data;

  TabulaPlainClient(String endpoint, Dataset data, int batch) {
    this.under = new TabulaClientUnderTest(endpoint, data, batch);
    this.client = under.client();
    this.data = data;
  }

  @Override
  public String name() {
    return "Tabula client";
  }

  @Override
  public String api(PlainWorkload w) {
    return switch (w) {
      case SEQ_UNARY_WRITE, RANDOM_UNARY_WRITE -> "`apply` (MutateRow)";
      case SEQ_LOAD, RANDOM_LOAD -> "`applyBatch` of 100 rows, 200 in flight";
      case RANDOM_UNARY_READ, SEQ_UNARY_READ -> "`readRow`";
      case SCAN -> "`source(Query.table(table))`";
      case LONE_WRITE -> "`apply`, one at a time";
      case LONE_READ -> "`readRow`, one at a time";
    };
  }

  @Override
  public void createTable(String table) throws Exception {
    under.createTable(table);
  }

  @Override
  public CompletionStage<Integer> mutateRow(String table, int row) {
    return client.apply(table, RowMutation.create(UnsafeByteOperations.unsafeWrap(data.key(row)))
        .setCell(FAMILY, QUALIFIER_BYTES, TIMESTAMP_MICROS, UnsafeByteOperations.unsafeWrap(data.value(row))))
        .thenApply(x -> 1);
  }

  @Override
  public CompletionStage<Integer> readRow(String table, int row) {
    return client.readRow(table, UnsafeByteOperations.unsafeWrap(data.key(row)), null).thenApply(got -> {
      if (got.isEmpty()) {
        throw new IllegalStateException(name() + ": row " + row + " is missing");
      }
      if (under.check(got.get()) != row) {
        throw new IllegalStateException(name() + ": asked for row " + row + ", got " + got.get().key().toStringUtf8());
      }
      return 1;
    });
  }

  @Override
  public InFlight.Result load(String table, int[] order, int batch, int inFlight) throws Exception {
    long requests = (order.length + batch - 1) / batch;
    InFlight.Result r = InFlight.run(inFlight, requests, Long.MAX_VALUE, k -> {
      int from = (int) (k * batch);
      return under.write(table, order, from, Math.min(order.length, from + batch));
    });
    if (r.values() != order.length) {
      throw new IllegalStateException(name() + " wrote " + r.values() + " rows of " + order.length);
    }
    return r;
  }

  @Override
  public void scan(String table, int rows) throws Exception {
    int[] next = {0};
    client.source(Query.table(table)).runWith(Sink.foreach(row -> {
      int r = under.check(row);
      if (r != next[0]) {
        throw new IllegalStateException(name() + ": scan returned row " + r + " where row " + next[0] + " was next");
      }
      next[0]++;
    }), under.materializer()).toCompletableFuture().get(10, TimeUnit.MINUTES);
    Checks.scanned(name(), 0, rows, next[0]);
  }

  @Override
  public void close() throws Exception {
    under.close();
  }
}
