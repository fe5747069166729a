package io.tabula.cluster.grpc;

import com.google.bigtable.v2.GenerateInitialChangeStreamPartitionsRequest;
import com.google.bigtable.v2.GenerateInitialChangeStreamPartitionsResponse;
import com.google.bigtable.v2.ReadChangeStreamRequest;
import com.google.bigtable.v2.ReadChangeStreamResponse;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.StreamContinuationToken;
import com.google.bigtable.v2.StreamPartition;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TabletInfo;
import io.tabula.cluster.routing.Router;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.tablet.ManifestCodec;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletManifest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Cloud Bigtable's change streams over Tabula's tablets (docs/change-streams.md): a table that
 * keeps its changes ({@code change_stream_config}) has one partition per tablet, its row range.
 * {@code GenerateInitialChangeStreamPartitions} lists them; {@code ReadChangeStream} reads one
 * ({@link ChangeReader}) from a start time or from continuation tokens ({@link ChangeToken}),
 * on any node.
 *
 * <p>Requests are checked first, each mistake answered with a status naming the field:
 * INVALID_ARGUMENT for a malformed partition, token, time or heartbeat, tokens that do not
 * cover the partition exactly, a start before the retention or in the future, an end before
 * the start; FAILED_PRECONDITION for a table that keeps no changes; NOT_FOUND for an unknown
 * table. A start time whose partition is no tablet's range now is answered as Cloud Bigtable
 * does, in the stream: a {@code CloseStream} (OUT_OF_RANGE) naming the tablets that hold its
 * rows, each with a token from that time. Thread-safe.
 */
final class ChangeStreams {
  /** The heartbeat interval when the request sets none (the API's default). */
  static final Duration DEFAULT_HEARTBEAT = Duration.ofSeconds(5);
  static final Duration MIN_HEARTBEAT = Duration.ofMillis(100);
  static final Duration MAX_HEARTBEAT = Duration.ofMinutes(5);
  /** How far ahead of this node's clock a start time may be (the client's clock may run ahead). */
  static final long FUTURE_SLACK_MICROS = 60_000_000L;

  private final Router router;
  private final Storage storage;
  private final Executor blockingIo;
  private final String clusterId;
  private final LongSupplier nowMicros;

  ChangeStreams(Router router, Storage storage, Executor blockingIo, String clusterId, LongSupplier nowMicros) {
    this.router = router;
    this.storage = storage;
    this.blockingIo = blockingIo;
    this.clusterId = clusterId;
    this.nowMicros = nowMicros;
  }

  Router router() {
    return router;
  }

  Storage storage() {
    return storage;
  }

  Executor blockingIo() {
    return blockingIo;
  }

  String clusterId() {
    return clusterId;
  }

  Source<GenerateInitialChangeStreamPartitionsResponse, NotUsed> partitions(
      GenerateInitialChangeStreamPartitionsRequest in) {
    String table = Names.tableId("table_name", in.getTableName());
    return Source.completionStage(keeping(table).thenCompose(t -> router.locations().every(table)))
        .mapConcat(tablets -> tablets.stream().map(ti -> GenerateInitialChangeStreamPartitionsResponse.newBuilder()
            .setPartition(ChangeResponses.partition(ti.startRow(), ti.endRow())).build()).toList());
  }

  Source<ReadChangeStreamResponse, NotUsed> read(ReadChangeStreamRequest in) {
    String table = Names.tableId("table_name", in.getTableName());
    if (!in.hasPartition() || !in.getPartition().hasRowRange()) {
      throw GrpcErrors.invalid("partition", "is required: one of the partitions GenerateInitialChangeStreamPartitions"
          + " lists, or that a CloseStream names");
    }
    byte[][] range = range("partition.row_range", in.getPartition().getRowRange());
    StreamPartition partition = ChangeResponses.partition(range[0], range[1]);
    long heartbeatNanos = heartbeat(in).toNanos();
    long end = in.hasEndTime() ? micros("end_time", in.getEndTime()) : 0;
    List<ChangeToken> tokens = in.hasContinuationTokens() ? tokens(in, range) : List.of();
    long now = nowMicros.getAsLong();
    long start = in.hasStartTime() ? micros("start_time", in.getStartTime()) : in.hasContinuationTokens() ? -1 : now;
    // Tokens: one position (a merged tablet's parents each give the same), and times of parents that
    // had not passed their start yet, which then only filter (docs/change-streams.md, "Partitions").
    List<ChangeToken> positions = tokens.stream().filter(ChangeToken::isPosition).toList();
    long fromTimes = tokens.stream().filter(t -> !t.isPosition()).mapToLong(ChangeToken::startMicros).min()
        .orElse(-1);
    if (positions.stream().distinct().count() > 1) {
      throw GrpcErrors.invalid("continuation_tokens", "name different positions: tokens of one partition come from"
          + " its CloseStreams, or one token from the last change or heartbeat read");
    }
    if (fromTimes >= 0) {
      start = fromTimes;
    }
    if (start > now + FUTURE_SLACK_MICROS) {
      throw GrpcErrors.invalid("start_time", "is in the future");
    }
    if (end > 0 && start > 0 && end <= start) {
      throw GrpcErrors.invalid("end_time", "must be after the start time");
    }
    long startFinal = start;
    return Source.completionStage(keeping(table).thenCompose(t -> {
      long retention = t.options().changeStreamRetentionMicros();
      if (startFinal >= 0 && startFinal < now - retention) {
        throw GrpcErrors.invalid(in.hasStartTime() ? "start_time" : "continuation_tokens", "is older than table "
            + table + "'s change retention of " + Duration.ofNanos(retention * 1000) + ": those changes are gone");
      }
      List<String> families = new ArrayList<>(t.families().keySet());
      return positions.isEmpty() ? fromTime(table, partition, range, families, startFinal, end, heartbeatNanos)
          : fromPosition(table, partition, range, families, positions.get(0), Math.max(0, startFinal), end,
              heartbeatNanos);
    })).flatMapConcat(s -> s);
  }

  /** The table, if it keeps changes: FAILED_PRECONDITION if not (NOT_FOUND if there is none). */
  private CompletionStage<TableInfo> keeping(String table) {
    return router.table(table).thenApply(t -> {
      if (t.options().changeStreamRetentionMicros() <= 0) {
        throw GrpcErrors.status(io.tabula.protocol.errors.ErrorCode.FAILED_PRECONDITION, "table " + table
            + " keeps no change stream: set change_stream_config with UpdateTable or CreateTable first", "table_name");
      }
      return t;
    });
  }

  /** A stream from a time: of the tablet whose range is the partition, or a CloseStream naming those that hold it. */
  private CompletionStage<Source<ReadChangeStreamResponse, NotUsed>> fromTime(String table, StreamPartition partition,
      byte[][] range, List<String> families, long start, long end, long heartbeatNanos) {
    return router.locations().every(table).thenApply(tablets -> {
      for (TabletInfo ti : tablets) {
        if (Arrays.equals(ti.startRow(), range[0]) && Arrays.equals(ti.endRow(), range[1])) {
          return stream(new ChangeReader(this, table, partition, families, ti.id(), 0, start, end, heartbeatNanos));
        }
      }
      List<StreamContinuationToken> tokens = new ArrayList<>();
      List<StreamPartition> next = new ArrayList<>();
      for (TabletInfo ti : tablets) {
        if (overlaps(ti.startRow(), ti.endRow(), range)) {
          StreamPartition p = ChangeResponses.partition(ti.startRow(), ti.endRow());
          byte[] from = ByteArrays.compare(ti.startRow(), range[0]) > 0 ? ti.startRow() : range[0];
          byte[] to = range[1].length == 0 ? ti.endRow() : ti.endRow().length == 0 ? range[1]
              : ByteArrays.compare(ti.endRow(), range[1]) < 0 ? ti.endRow() : range[1];
          tokens.add(ChangeResponses.token(ChangeResponses.partition(from, to), ChangeToken.time(start)));
          next.add(p);
        }
      }
      return Source.single(ChangeResponses.moved("the partition is not one of the table's partitions now: read"
          + " the new partitions", tokens, next));
    });
  }

  /** A stream from a position: the partition must be the range of the tablet the token names. */
  private CompletionStage<Source<ReadChangeStreamResponse, NotUsed>> fromPosition(String table,
      StreamPartition partition, byte[][] range, List<String> families, ChangeToken token, long start, long end,
      long heartbeatNanos) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return ManifestCodec.read(storage, Tablet.dirOf(table, token.tabletId()));
      } catch (java.nio.file.NoSuchFileException gone) {
        throw GrpcErrors.invalid("continuation_tokens", "names a tablet of table " + table + " whose changes are"
            + " no longer kept (or never were)");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, blockingIo).thenApply(m -> {
      if (!Arrays.equals(m.startRow(), range[0]) || !Arrays.equals(m.endRow(), range[1])) {
        throw GrpcErrors.invalid("continuation_tokens", "name a position of another partition than "
            + "partition.row_range");
      }
      return stream(new ChangeReader(this, table, partition, families, token.tabletId(), token.after(), start, end,
          heartbeatNanos));
    });
  }

  private static Source<ReadChangeStreamResponse, NotUsed> stream(ChangeReader reader) {
    // One step at a time, each only once the client took the last: a slow reader holds one step.
    return Source.unfoldAsync(reader, r -> r.next().thenApply(step -> step.map(out -> org.apache.pekko.japi.Pair
        .create(r, out)))).mapConcat(out -> out);
  }

  /** The tokens, checked: well-formed, and their partitions covering the request's exactly, without overlap. */
  private static List<ChangeToken> tokens(ReadChangeStreamRequest in, byte[][] range) {
    List<StreamContinuationToken> given = in.getContinuationTokens().getTokensList();
    if (given.isEmpty()) {
      throw GrpcErrors.invalid("continuation_tokens", "holds no token");
    }
    if (given.size() > 1024) {
      throw GrpcErrors.invalid("continuation_tokens", "holds " + given.size() + " tokens; a partition has at most 2");
    }
    List<byte[][]> covered = new ArrayList<>();
    List<ChangeToken> out = new ArrayList<>();
    for (int i = 0; i < given.size(); i++) {
      String field = "continuation_tokens.tokens[" + i + "]";
      StreamContinuationToken t = given.get(i);
      if (!t.hasPartition() || !t.getPartition().hasRowRange()) {
        throw GrpcErrors.invalid(field + ".partition", "is required");
      }
      covered.add(range(field + ".partition.row_range", t.getPartition().getRowRange()));
      try {
        out.add(ChangeToken.decode(t.getToken()));
      } catch (ChangeToken.MalformedTokenException e) {
        throw GrpcErrors.invalid(field + ".token", e.problem());
      }
    }
    covered.sort(Comparator.comparing((byte[][] r) -> r[0], ByteArrays::compare));
    byte[] at = range[0];
    for (byte[][] r : covered) {
      if (!Arrays.equals(r[0], at) || at == null) {
        throw GrpcErrors.invalid("continuation_tokens", "partitions do not cover partition.row_range exactly");
      }
      at = r[1].length == 0 ? null : r[1];
    }
    if (at == null ? range[1].length != 0 : !Arrays.equals(at, range[1])) {
      throw GrpcErrors.invalid("continuation_tokens", "partitions do not cover partition.row_range exactly");
    }
    return out;
  }

  /** A row range as [start, end): empty start from the first row, empty end to the last; start before end. */
  static byte[][] range(String field, RowRange r) {
    byte[] start = switch (r.getStartKeyCase()) {
      case START_KEY_CLOSED -> r.getStartKeyClosed().toByteArray();
      case START_KEY_OPEN -> RowRanges.successor(r.getStartKeyOpen().toByteArray());
      default -> new byte[0];
    };
    byte[] end = switch (r.getEndKeyCase()) {
      case END_KEY_OPEN -> r.getEndKeyOpen().toByteArray();
      case END_KEY_CLOSED -> RowRanges.successor(r.getEndKeyClosed().toByteArray());
      default -> new byte[0];
    };
    if (end.length > 0 && ByteArrays.compare(start, end) >= 0) {
      throw GrpcErrors.invalid(field, "is empty: its start is not before its end");
    }
    return new byte[][] {start, end};
  }

  private static boolean overlaps(byte[] start, byte[] end, byte[][] range) {
    return (end.length == 0 || ByteArrays.compare(end, range[0]) > 0)
        && (range[1].length == 0 || ByteArrays.compare(start, range[1]) < 0);
  }

  private static Duration heartbeat(ReadChangeStreamRequest in) {
    if (!in.hasHeartbeatDuration()) {
      return DEFAULT_HEARTBEAT;
    }
    com.google.protobuf.Duration d = in.getHeartbeatDuration();
    if (d.getNanos() < 0 || d.getNanos() >= 1_000_000_000 || d.getSeconds() < 0 || d.getSeconds() > 315_576_000_000L) {
      throw GrpcErrors.invalid("heartbeat_duration", "is not a valid duration");
    }
    Duration out = Duration.ofSeconds(d.getSeconds(), d.getNanos());
    if (out.compareTo(MIN_HEARTBEAT) < 0 || out.compareTo(MAX_HEARTBEAT) > 0) {
      throw GrpcErrors.invalid("heartbeat_duration", "must be between " + MIN_HEARTBEAT.toMillis() + " ms and "
          + MAX_HEARTBEAT.toMinutes() + " minutes, was " + out);
    }
    return out;
  }

  private static long micros(String field, com.google.protobuf.Timestamp t) {
    if (t.getNanos() < 0 || t.getNanos() >= 1_000_000_000 || t.getSeconds() < 0 || t.getSeconds() > 253_402_300_799L) {
      throw GrpcErrors.invalid(field, "is not a valid time (from 1970 to 9999)");
    }
    return ChangeResponses.micros(t);
  }
}
