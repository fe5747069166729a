package io.tabula.client;

import com.google.bigtable.v2.ReadChangeStreamRequest;
import com.google.bigtable.v2.ReadChangeStreamResponse;
import com.google.bigtable.v2.ReadChangeStreamResponse.CloseStream;
import com.google.bigtable.v2.StreamContinuationToken;
import com.google.bigtable.v2.StreamContinuationTokens;
import com.google.bigtable.v2.StreamPartition;
import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import io.grpc.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.stream.SourceShape;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Reads one partition of a table's change stream until its {@code CloseStream}, then tells its
 * {@link ChangeStream} how it ended. The first call starts from the stream's start time, or
 * from the tokens a {@code CloseStream} gave for this partition; each further call resumes from
 * the last token seen, a completed change's or a heartbeat's, paired with this partition (a
 * change cut off by the failure is read again whole). A call that fails with a retryable code,
 * or that ends without a {@code CloseStream}, is followed by the next after a backoff under the
 * client's {@link RetrySettings}; the count of attempts and the total timeout start again at
 * every message received, so a stream that runs for days resumes as often as it needs to.
 *
 * <p>Calls follow each other (one {@code flatMapConcat} over a repetition of attempts, ended by
 * the {@code CloseStream}), so a resume adds no stage to the stream however often it happens.
 * One instance per partition and run; its state is touched only by its stream's stages, one at
 * a time.
 */
final class PartitionReader {
  /** How often a caught-up partition's stream brings a heartbeat: a position to resume from, and an end time reached. */
  static final Duration HEARTBEAT = Duration.ofSeconds(1);

  /** Ends the attempt that read the {@code CloseStream}; compared by identity, never passed on. */
  private static final Change CLOSED = new Change(ByteString.EMPTY, Instant.EPOCH, "", List.of());

  private final ChangeStream stream;
  private final StreamPartition partition;
  private final List<StreamContinuationToken> tokens;
  private final ByteString firstRow;
  private final ChangeAssembler assembler = new ChangeAssembler();
  private String lastToken;
  private CloseStream close;
  private int failures;
  private long failingSince;

  /** {@code tokens}: where a CloseStream said this partition starts; none to start from the stream's start time. */
  PartitionReader(ChangeStream stream, StreamPartition partition, List<StreamContinuationToken> tokens) {
    this.stream = stream;
    this.partition = partition;
    this.tokens = List.copyOf(tokens);
    this.firstRow = ChangeStream.Range.of(partition.getRowRange()).start();
  }

  Source<Change, NotUsed> changes() {
    return Source.repeat(this)
        .flatMapConcat(PartitionReader::attempt)
        .takeWhile(c -> c != CLOSED)
        .concatLazy(Source.lazySource(() -> {
          stream.ended(close);
          return Source.<Change>empty();
        }).mapMaterializedValue(m -> NotUsed.getInstance()));
  }

  private Source<Change, NotUsed> attempt() {
    return Source.lazySource(this::call).mapMaterializedValue(m -> NotUsed.getInstance());
  }

  /** One ReadChangeStream call to the node the location cache names for the partition's first row. */
  private Source<Change, NotUsed> call() {
    ReadChangeStreamRequest req = request();
    assembler.reset();
    TabulaClient client = stream.client();
    Source<Change, NotUsed> changes = Source.completionStage(client.locations().locate(stream.tableName(), firstRow))
        .flatMapConcat(l -> client.endpoint(l.endpoint()).streaming().readChangeStream(req))
        .mapConcat(this::accept)
        .concatLazy(Source.lazySource(() -> close != null ? Source.<Change>empty()
            : Source.<Change>failed(new TabulaException(Status.Code.UNAVAILABLE, "the change stream of "
                + describe() + " ended without a CloseStream")))
            .mapMaterializedValue(m -> NotUsed.getInstance()));
    return changes.recoverWithRetries(1, new PFBuilder<Throwable, Graph<SourceShape<Change>, NotUsed>>()
        .match(Throwable.class, this::afterFailure).build());
  }

  private ReadChangeStreamRequest request() {
    ReadChangeStreamRequest.Builder b = ReadChangeStreamRequest.newBuilder().setTableName(stream.tableName())
        .setPartition(partition).setHeartbeatDuration(com.google.protobuf.Duration.newBuilder()
            .setSeconds(HEARTBEAT.getSeconds()).setNanos(HEARTBEAT.getNano()));
    if (lastToken != null) {
      b.setContinuationTokens(StreamContinuationTokens.newBuilder().addTokens(StreamContinuationToken.newBuilder()
          .setPartition(partition).setToken(lastToken)));
    } else if (!tokens.isEmpty()) {
      b.setContinuationTokens(StreamContinuationTokens.newBuilder().addAllTokens(tokens));
    } else {
      b.setStartTime(timestamp(stream.from()));
    }
    if (stream.until() != null) {
      b.setEndTime(timestamp(stream.until()));
    }
    return b.build();
  }

  /** The changes one message completes; {@link #CLOSED} for the CloseStream, which the node sends last. */
  private List<Change> accept(ReadChangeStreamResponse r) {
    failures = 0;
    switch (r.getStreamRecordCase()) {
      case DATA_CHANGE -> {
        Change c = assembler.accept(r.getDataChange());
        if (c == null) {
          return List.of();
        }
        lastToken = c.token();
        return List.of(c);
      }
      case HEARTBEAT -> {
        if (!assembler.inChange()) {
          lastToken = r.getHeartbeat().getContinuationToken().getToken();
        }
        return List.of();
      }
      case CLOSE_STREAM -> {
        CloseStream c = r.getCloseStream();
        Status.Code code = Status.fromCodeValue(c.getStatus().getCode()).getCode();
        if (code != Status.Code.OK && code != Status.Code.OUT_OF_RANGE) {
          throw new TabulaException(code, "the change stream of " + describe() + " closed: "
              + c.getStatus().getMessage());
        }
        if (c.getNewPartitionsCount() != c.getContinuationTokensCount()) {
          throw new TabulaException(Status.Code.INTERNAL, "the change stream of " + describe() + " closed naming "
              + c.getNewPartitionsCount() + " partitions with " + c.getContinuationTokensCount() + " tokens");
        }
        close = c;
        return List.of(CLOSED);
      }
      default -> {
        return List.of();
      }
    }
  }

  /** Waits and ends this attempt, so that the next resumes; or fails the stream if it may not be retried. */
  private Source<Change, NotUsed> afterFailure(Throwable err) {
    stream.client().forget(stream.tableName(), firstRow, err);
    TabulaException e = Failures.of(err);
    if (failures++ == 0) {
      failingSince = System.nanoTime();
    }
    Retrier retrier = stream.retrier();
    Optional<Duration> wait = e.isRetryable() || Failures.isStaleRoute(e)
        ? retrier.within(failures, failingSince, retrier.waitAfter(failures, e)) : Optional.empty();
    if (wait.isEmpty()) {
      return Source.failed(failures == 1 ? e : e.withDescription(e.description() + " (after " + failures
          + " attempts)"));
    }
    CompletableFuture<Boolean> pause = CompletableFuture.supplyAsync(() -> true,
        CompletableFuture.delayedExecutor(wait.get().toNanos(), TimeUnit.NANOSECONDS));
    return Source.completionStage(pause).flatMapConcat(x -> Source.<Change>empty());
  }

  private String describe() {
    ChangeStream.Range r = ChangeStream.Range.of(partition.getRowRange());
    return "partition [" + r.start().toStringUtf8() + ", " + r.end().toStringUtf8() + ") of " + stream.tableName();
  }

  private static Timestamp timestamp(Instant t) {
    return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
  }
}
