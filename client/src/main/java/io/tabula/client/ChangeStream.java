package io.tabula.client;

import com.google.bigtable.v2.GenerateInitialChangeStreamPartitionsRequest;
import com.google.bigtable.v2.GenerateInitialChangeStreamPartitionsResponse;
import com.google.bigtable.v2.ReadChangeStreamResponse.CloseStream;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.StreamContinuationToken;
import com.google.bigtable.v2.StreamPartition;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.QueueOfferResult;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * One run of a table's change stream (docs/change-streams.md): every partition the table has
 * ({@code GenerateInitialChangeStreamPartitions}), each read by a {@link PartitionReader}, their
 * changes merged into one stream as they come. A partition whose stream ends with a {@code
 * CloseStream} of status OUT_OF_RANGE goes on as the new partitions it names, each opened with
 * the tokens given for it; a merged partition waits until the tokens received for it, from all
 * its parents, cover it exactly (sorted by start, contiguous). Status OK means the end time was
 * reached: the partition is done, and the stream completes when every partition is.
 *
 * <p>Bounded and back-pressured: partitions to open wait in a queue of at most {@value
 * #MAX_PARTITIONS}, and the partitions' streams are merged with {@code flatMapMerge}, which
 * takes a change from a partition only when downstream asks for one (so a reader that pauses
 * holds each partition's gRPC stream to its flow-control window). Cancelling cancels every
 * partition's call; one partition failing for good fails the stream and cancels the others.
 *
 * <p>One instance per materialization. Its partitions end on the stream's own threads, so the
 * waiting tokens and the count of open partitions are guarded by this instance's monitor.
 */
final class ChangeStream {
  /** The most partitions read at once, and queued to be opened. */
  static final int MAX_PARTITIONS = 10_000;

  private final TabulaClient client;
  private final Retrier retrier;
  private final String tableName;
  private final Instant from;
  private final Instant until;
  @GuardedBy("this")
  private final Map<Range, List<StreamContinuationToken>> waiting = new HashMap<>();
  @GuardedBy("this")
  private int open;
  @GuardedBy("this")
  private BoundedSourceQueue<PartitionReader> queue;

  /** The table's changes from {@code from}, up to {@code until} (exclusive; null for none). */
  ChangeStream(TabulaClient client, Retrier retrier, String tableName, Instant from, Instant until) {
    this.client = client;
    this.retrier = retrier;
    this.tableName = tableName;
    this.from = from;
    this.until = until;
  }

  Source<Change, NotUsed> changes() {
    return Source.<PartitionReader>queue(MAX_PARTITIONS)
        .mapMaterializedValue(q -> {
          start(q);
          return NotUsed.getInstance();
        })
        .flatMapMerge(MAX_PARTITIONS, PartitionReader::changes);
  }

  TabulaClient client() {
    return client;
  }

  Retrier retrier() {
    return retrier;
  }

  String tableName() {
    return tableName;
  }

  Instant from() {
    return from;
  }

  Instant until() {
    return until;
  }

  /** Lists the table's partitions and opens each from the start time. */
  private void start(BoundedSourceQueue<PartitionReader> q) {
    synchronized (this) {
      queue = q;
    }
    partitions().whenComplete((partitions, err) -> {
      if (err != null) {
        q.fail(Failures.of(err));
        return;
      }
      synchronized (this) {
        if (partitions.isEmpty()) {
          q.complete();
        }
        partitions.forEach(p -> open(new PartitionReader(this, p.getPartition(), List.of())));
      }
    });
  }

  private CompletionStage<List<GenerateInitialChangeStreamPartitionsResponse>> partitions() {
    GenerateInitialChangeStreamPartitionsRequest req = GenerateInitialChangeStreamPartitionsRequest.newBuilder()
        .setTableName(tableName).build();
    return retrier.run(true, n -> client.seed().streaming().generateInitialChangeStreamPartitions(req)
        .completionTimeout(retrier.settings().attemptTimeout())
        .runWith(Sink.seq(), client.materializer()), err -> client.forget(tableName, ByteString.EMPTY, err));
  }

  /**
   * Partition {@code reader} ended with {@code close}: opens the new partitions it names once
   * their tokens cover them, and completes the stream when no partition is left.
   */
  synchronized void ended(CloseStream close) {
    if (close.getStatus().getCode() == Status.Code.OUT_OF_RANGE.value()) {
      for (int i = 0; i < close.getNewPartitionsCount(); i++) {
        offer(close.getNewPartitions(i), close.getContinuationTokens(i));
      }
    }
    open--;
    if (open == 0) {
      queue.complete();
    }
  }

  /** A token for a new partition: the partition is opened once the tokens given for it cover it. */
  @GuardedBy("this")
  private void offer(StreamPartition partition, StreamContinuationToken token) {
    Range range = Range.of(partition.getRowRange());
    List<StreamContinuationToken> tokens = waiting.computeIfAbsent(range, r -> new ArrayList<>());
    tokens.add(token);
    if (range.coveredBy(tokens.stream().map(t -> Range.of(t.getPartition().getRowRange())).toList())) {
      waiting.remove(range);
      open(new PartitionReader(this, partition, tokens));
    }
  }

  @GuardedBy("this")
  private void open(PartitionReader reader) {
    QueueOfferResult offered = queue.offer(reader);
    if (offered == QueueOfferResult.enqueued()) {
      open++;
    } else if (offered == QueueOfferResult.dropped()) {
      queue.fail(new TabulaException(Status.Code.RESOURCE_EXHAUSTED, "table " + tableName + " has more than "
          + MAX_PARTITIONS + " change stream partitions, the most one reader follows"));
    }
    // Otherwise the stream was cancelled or failed: nothing is read any more.
  }

  /**
   * A partition's rows [start, end), whatever way its range was written (an open start or a
   * closed end becomes the next key); an empty end is the table's end.
   */
  record Range(ByteString start, ByteString end) {
    static Range of(RowRange r) {
      ByteString start = switch (r.getStartKeyCase()) {
        case START_KEY_CLOSED -> r.getStartKeyClosed();
        case START_KEY_OPEN -> r.getStartKeyOpen().concat(ByteString.copyFrom(new byte[1]));
        case STARTKEY_NOT_SET -> ByteString.EMPTY;
      };
      ByteString end = switch (r.getEndKeyCase()) {
        case END_KEY_OPEN -> r.getEndKeyOpen();
        case END_KEY_CLOSED -> r.getEndKeyClosed().concat(ByteString.copyFrom(new byte[1]));
        case ENDKEY_NOT_SET -> ByteString.EMPTY;
      };
      return new Range(start, end);
    }

    /** True if {@code parts}, sorted by start, follow each other from this range's start to its end exactly. */
    boolean coveredBy(List<Range> parts) {
      List<Range> sorted = new ArrayList<>(parts);
      sorted.sort((a, b) -> Bytes.compare(a.start, b.start));
      ByteString at = start;
      for (int i = 0; i < sorted.size(); i++) {
        Range r = sorted.get(i);
        if (!r.start.equals(at)) {
          return false;
        }
        at = r.end;
        if (at.isEmpty()) {
          return i == sorted.size() - 1 && end.isEmpty();
        }
      }
      return at.equals(end);
    }
  }
}
