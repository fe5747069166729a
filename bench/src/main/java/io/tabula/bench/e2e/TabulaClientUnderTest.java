package io.tabula.bench.e2e;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import com.typesafe.config.ConfigFactory;
import io.tabula.bench.Dataset;
import io.tabula.client.Cell;
import io.tabula.client.GcPolicy;
import io.tabula.client.MutationResult;
import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * The Tabula Java client: writes with {@link TabulaClient#applyBatch} (MutateRows), reads
 * with {@link TabulaClient#readRows} of a multi-key {@link Query} (one ReadRows), scans with
 * {@link TabulaClient#source} of a key range, consumed as the stream delivers it.
 */
final class TabulaClientUnderTest implements ClientUnderTest {
  private static final String NAME = "Tabula client";
  private final ActorSystem system;
  private final Materializer materializer;
  private final TabulaClient client;
  private final Dataset data;
  private final Checks checks;

  /**
   * @param batchEntries most rows in one MutateRows the client sends (it cuts larger
   *     {@code applyBatch} calls into several)
   */
  TabulaClientUnderTest(String endpoint, Dataset data, int batchEntries) {
    this.system = ActorSystem.create("tabula-e2e-client", ConfigFactory.parseString("""
        pekko.loglevel = WARNING
        pekko.stdout-loglevel = WARNING
        pekko.log-dead-letters = off
        pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        pekko.actor.default-dispatcher.fork-join-executor.parallelism-min = 2
        pekko.actor.default-dispatcher.fork-join-executor.parallelism-factor = 1.0
        """).withFallback(ConfigFactory.load()));
    this.materializer = Materializer.matFromSystem(system);
    this.client = TabulaClient.builder().endpoint(endpoint).actorSystem(system).deadline(Duration.ofSeconds(60))
        .batching(batchEntries, 16 << 20, 4).build();
    this.data = data;
    this.checks = new Checks(data);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String writeApi() {
    return "`applyBatch` (one MutateRows)";
  }

  @Override
  public String readApi() {
    return "`readRows(Query.rowKey(..) x K)` (one multi-key ReadRows)";
  }

  @Override
  public String scanApi() {
    return "`source(Query.range(..))` (one streamed ReadRows)";
  }

  @Override
  public void createTable(String table) throws Exception {
    client.admin().createTable(table, Map.of(FAMILY, GcPolicy.maxVersions(1))).toCompletableFuture()
        .get(60, TimeUnit.SECONDS);
  }

  @Override
  public CompletionStage<Integer> write(String table, int[] rows, int from, int to) {
    List<RowMutation> batch = new ArrayList<>(to - from);
    ByteString qualifier = ByteString.copyFromUtf8(QUALIFIER);
    for (int i = from; i < to; i++) {
      batch.add(RowMutation.create(UnsafeByteOperations.unsafeWrap(data.key(rows[i])))
          .setCell(FAMILY, qualifier, TIMESTAMP_MICROS, UnsafeByteOperations.unsafeWrap(data.value(rows[i]))));
    }
    return client.applyBatch(table, batch).thenApply(results -> {
      for (MutationResult r : results) {
        if (r.error().isPresent()) {
          throw r.error().get();
        }
      }
      return results.size();
    });
  }

  @Override
  public CompletionStage<Integer> read(String table, int[] rows, int from, int to) {
    Query q = Query.table(table);
    for (int i = from; i < to; i++) {
      q.rowKey(UnsafeByteOperations.unsafeWrap(data.key(rows[i])));
    }
    return client.readRows(q).thenApply(got -> Checks.readBack(NAME, rows, from, to, got, this::check));
  }

  @Override
  public CompletionStage<Integer> scan(String table, int fromRow, int toRow) {
    Query q = Query.table(table).range(UnsafeByteOperations.unsafeWrap(data.key(fromRow)),
        UnsafeByteOperations.unsafeWrap(data.key(toRow)));
    return client.source(q).runWith(Sink.fold(Pair.create(0, fromRow), (acc, row) -> {
      int r = check(row);
      if (r != acc.second()) {
        throw new IllegalStateException(NAME + ": scan returned row " + r + " where row " + acc.second()
            + " was next");
      }
      return Pair.create(acc.first() + 1, r + 1);
    }), materializer).thenApply(acc -> {
      Checks.scanned(NAME, fromRow, toRow, acc.first());
      return acc.first();
    });
  }

  /** The client, for calls beyond this interface's. */
  TabulaClient client() {
    return client;
  }

  Materializer materializer() {
    return materializer;
  }

  /** Checks a row read back (one cell with the dataset's value); answers its row number. */
  int check(Row row) {
    int r = Checks.rowOf(row.key());
    List<Cell> cells = row.cells();
    if (cells.size() != 1) {
      throw new IllegalStateException(NAME + ": row " + r + " has " + cells.size() + " cells, expected 1");
    }
    checks.value(NAME, r, cells.get(0).value());
    return r;
  }

  @Override
  public void close() throws Exception {
    try {
      client.close();
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
