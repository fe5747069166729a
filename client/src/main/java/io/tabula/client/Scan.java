package io.tabula.client;

import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.javadsl.Source;

/**
 * One run of a scan: streams the request's rows from the node holding its first row,
 * remembers the last row delivered, and when the stream fails with a retryable code,
 * waits a backoff (or the delay the node asked for, if longer) and goes on with
 * {@link ScanResume#after} on a new stream. One instance
 * per materialization; its state is touched only by the stream's stages, one at a time.
 */
final class Scan {
  private final TabulaClient client;
  private final ReadRowsRequest request;
  private final Retrier retrier;
  private final long startNanos = System.nanoTime();
  private ByteString lastKey;
  private long delivered;

  Scan(TabulaClient client, ReadRowsRequest request, Retrier retrier) {
    this.client = client;
    this.request = request;
    this.retrier = retrier;
  }

  Source<Row, NotUsed> rows() {
    return attempt(1);
  }

  private Source<Row, NotUsed> attempt(int n) {
    ReadRowsRequest req = ScanResume.after(request, lastKey, delivered);
    if (req == null) {
      return Source.empty();
    }
    RowMerger merger = new RowMerger(req.getReversed());
    ByteString first = firstRow(req.getRows());
    Source<Row, NotUsed> stream = Source.completionStage(client.locations().locate(req.getTableName(), first))
        .flatMapConcat(l -> client.endpoint(l.endpoint()).streaming().readRows(req))
        .mapConcat(merger::accept)
        // concatLazy: a plain concat pulls its second source at once, which ran the check before any chunk.
        .concatLazy(Source.lazySource(() -> {
          merger.finish();
          return Source.<Row>empty();
        }).mapMaterializedValue(m -> NotUsed.getInstance()))
        .map(row -> {
          lastKey = row.key();
          delivered++;
          return row;
        });
    return stream.recoverWithRetries(1, new PFBuilder<Throwable, org.apache.pekko.stream.Graph<
        org.apache.pekko.stream.SourceShape<Row>, NotUsed>>().match(Throwable.class, err -> {
          client.forget(req.getTableName(), first, err);
          TabulaException e = Failures.of(err);
          Optional<Duration> wait = e.isRetryable() ? retrier.within(n, startNanos, retrier.waitAfter(n, e))
              : Optional.empty();
          if (wait.isEmpty()) {
            return Source.<Row>failed(e);
          }
          // The pause yields the next attempt's number: a stage completed with null is an empty Source,
          // which would end the scan quietly after the rows so far instead of resuming it.
          CompletableFuture<Integer> pause = CompletableFuture.supplyAsync(() -> n + 1,
              CompletableFuture.delayedExecutor(wait.get().toNanos(), TimeUnit.NANOSECONDS));
          return Source.completionStage(pause).flatMapConcat(this::attempt);
        }).build());
  }

  /** The first row key the row set can hold (the empty key when it starts at the table's start). */
  static ByteString firstRow(RowSet rows) {
    ByteString first = null;
    for (ByteString k : rows.getRowKeysList()) {
      first = first == null || Bytes.compare(k, first) < 0 ? k : first;
    }
    List<RowRange> ranges = rows.getRowRangesList();
    for (RowRange r : ranges) {
      ByteString s = r.hasStartKeyClosed() ? r.getStartKeyClosed() : r.hasStartKeyOpen() ? r.getStartKeyOpen()
          : ByteString.EMPTY;
      first = first == null || Bytes.compare(s, first) < 0 ? s : first;
    }
    return first == null ? ByteString.EMPTY : first;
  }
}
