package io.tabula.cluster.grpc;

import com.google.bigtable.v2.BigtablePowerApi;
import com.google.bigtable.v2.CheckAndMutateRowRequest;
import com.google.bigtable.v2.CheckAndMutateRowResponse;
import com.google.bigtable.v2.ClientConfiguration;
import com.google.bigtable.v2.ExecuteQueryRequest;
import com.google.bigtable.v2.ExecuteQueryResponse;
import com.google.bigtable.v2.GenerateInitialChangeStreamPartitionsRequest;
import com.google.bigtable.v2.GenerateInitialChangeStreamPartitionsResponse;
import com.google.bigtable.v2.GetClientConfigurationRequest;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowResponse;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.MutateRowsResponse;
import com.google.bigtable.v2.PingAndWarmRequest;
import com.google.bigtable.v2.PingAndWarmResponse;
import com.google.bigtable.v2.PrepareQueryRequest;
import com.google.bigtable.v2.PrepareQueryResponse;
import com.google.bigtable.v2.ReadChangeStreamRequest;
import com.google.bigtable.v2.ReadChangeStreamResponse;
import com.google.bigtable.v2.ReadModifyWriteRowRequest;
import com.google.bigtable.v2.ReadModifyWriteRowResponse;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.RowSet;
import com.google.bigtable.v2.SampleRowKeysRequest;
import com.google.bigtable.v2.SampleRowKeysResponse;
import com.google.bigtable.v2.SessionClientConfiguration;
import com.google.bigtable.v2.SessionRequest;
import com.google.bigtable.v2.SessionResponse;
import com.google.protobuf.ByteString;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.cluster.routing.Router;
import io.tabula.cluster.routing.Scans;
import io.tabula.cluster.routing.TabletBatches;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.streams.filter.FilteredRow;
import io.tabula.streams.filter.InvalidFilterException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.grpc.javadsl.Metadata;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Source;

/**
 * The Cloud Bigtable data API ({@code google.bigtable.v2.Bigtable}) over Tabula's tablets: a
 * thin translator that checks each request, turns it into tablet messages and turns the
 * answers back. RPCs Tabula does not offer answer UNIMPLEMENTED.
 *
 * <p>Served through the power API for its request headers: a single-row request (MutateRow,
 * CheckAndMutateRow, ReadModifyWriteRow, and ReadRows of exactly one row key) that names a
 * tablet in the {@value RouteCheck#TABLET_HEADER} header goes through {@link RouteCheck}
 * first. Other headers are ignored.
 */
public final class DataService implements BigtablePowerApi {
  /** How many bytes of rows one ReadRows response carries at most (a single larger row goes alone). */
  private static final long RESPONSE_BYTES = 256 * 1024;

  private final Router router;
  private final RouteCheck routes;
  private final TabletBatches batches;
  private final Scans scans;
  private final ChangeStreams changes;

  DataService(Router router, Owners owners, ChangeStreams changes) {
    this.router = router;
    this.changes = changes;
    this.routes = new RouteCheck(router, owners);
    this.batches = new TabletBatches(router);
    this.scans = new Scans(router);
  }

  // ---- reads

  @Override
  public Source<ReadRowsResponse, NotUsed> readRows(ReadRowsRequest in, Metadata metadata) {
    return GrpcErrors.streaming(() -> {
      ReadPlan plan = ReadPlan.of(in, this::filterBytes, target(in.getTableName(), in.getAuthorizedViewName(),
          in.getMaterializedViewName()));
      if (plan.gathered()) {
        return Source.completionStage(gathered(in, metadata, plan)).mapConcat(responses -> responses);
      }
      String table = plan.table();
      List<RowRanges.Range> ranges = plan.ranges();
      byte[] filter = plan.filter();
      // Rows travel a few at a time (never empty lists), as the engine's scans read them.
      Source<List<FilteredRow>, NotUsed> rows = Source.completionStage(router.table(table)
          .thenCompose(t -> checkSingleRow(metadata, table, in.getRows()).thenApply(ok -> t)))
          .flatMapConcat(t -> keysOnly(ranges) && ranges.size() > 1
              ? batches.read(table, ranges.stream().map(RowRanges.Range::start).toList(), filter)
              : Source.from(ranges).flatMapConcat(r -> r.single()
                  ? Source.completionStage(batches.readOne(table, r.start(), filter)).filter(few -> !few.isEmpty())
                  : scans.range(table, r.start(), r.end(), filter, in.getReversed())));
      if (in.getRowsLimit() > 0) {
        rows = limit(rows, in.getRowsLimit());
      }
      // Rows ready faster than the client takes them share a response, up to RESPONSE_BYTES.
      // The stages run apart from the HTTP/2 connection's (async), which serves every call
      // on the connection on one thread.
      return rows.batchWeighted(RESPONSE_BYTES, Chunks::weight, Chunks::builder, Chunks::addRows)
          .map(ReadRowsResponse.Builder::build).async();
    });
  }

  /**
   * The start of the whole answer to a ReadRows of a few row keys, or empty for a read that
   * streams (row ranges, or more keys than one gathered read takes). A request that fails its
   * checks answers with a failed stage.
   */
  Optional<Supplier<CompletionStage<List<ReadRowsResponse>>>> readRowsWhole(ReadRowsRequest in, Metadata metadata) {
    ReadPlan plan;
    try {
      plan = ReadPlan.of(in, this::filterBytes, target(in.getTableName(), in.getAuthorizedViewName(),
          in.getMaterializedViewName()));
    } catch (RuntimeException e) {
      return Optional.of(() -> CompletableFuture.failedFuture(GrpcErrors.from(e)));
    }
    return plan.gathered() ? Optional.of(() -> GrpcErrors.unary(() -> gathered(in, metadata, plan))) : Optional.empty();
  }

  /** A ReadRows request checked and taken apart: what to read, and whether it is answered whole. */
  private record ReadPlan(String table, byte[] filter, List<RowRanges.Range> ranges) {
    /** Through a view, the rows are those of the view among those asked, and the view's columns filter first. */
    static ReadPlan of(ReadRowsRequest in, BiFunction<String, RowFilter, byte[]> filterBytes, Views.Target target) {
      String table = target.table();
      RowFilter asked = in.hasFilter() ? in.getFilter() : null;
      byte[] filter = filterBytes.apply("filter", target.view().map(v -> Views.filter(v, asked)).orElse(asked));
      if (in.getRowsLimit() < 0) {
        throw GrpcErrors.invalid("rows_limit", "must not be negative, was " + in.getRowsLimit());
      }
      List<RowRanges.Range> all = RowRanges.of(in.getRows());
      List<RowRanges.Range> ranges = new ArrayList<>(target.view().map(v -> Views.rows(v, all)).orElse(all));
      if (in.getReversed()) {
        Collections.reverse(ranges);
      }
      return new ReadPlan(table, filter, ranges);
    }

    boolean gathered() {
      return !ranges.isEmpty() && ranges.size() <= TabletBatches.GATHERED_KEYS && keysOnly(ranges);
    }
  }

  /**
   * A read of a few row keys, answered whole: the rows are read (directly, for tablets served
   * here) and cut into responses before the answer starts, one future and no stream stages
   * per request.
   */
  private CompletionStage<List<ReadRowsResponse>> gathered(ReadRowsRequest in, Metadata metadata, ReadPlan plan) {
    long limit = in.getRowsLimit();
    String table = plan.table();
    List<byte[]> keys = plan.ranges().stream().map(RowRanges.Range::start).toList();
    return router.table(table)
        .thenCompose(t -> checkSingleRow(metadata, table, in.getRows()))
        .thenCompose(ok -> keys.size() == 1 ? batches.readOne(table, keys.get(0), plan.filter())
            : batches.readAll(table, keys, plan.filter()))
        .thenApply(rows -> Chunks.responses(limit > 0 && rows.size() > limit ? rows.subList(0, (int) limit) : rows,
            RESPONSE_BYTES));
  }

  /** The first {@code limit} rows of {@code rows}; the stream ends with the list that reaches it. */
  private static Source<List<FilteredRow>, NotUsed> limit(Source<List<FilteredRow>, NotUsed> rows, long limit) {
    return rows.statefulMap(() -> new long[] {0}, (seen, few) -> {
      long left = limit - seen[0];
      List<FilteredRow> kept = few.size() <= left ? few : few.subList(0, (int) left);
      seen[0] += kept.size();
      return Pair.create(seen, Pair.create(kept, seen[0] >= limit));
    }, seen -> Optional.empty()).takeWhile(p -> !p.second(), true).map(Pair::first);
  }

  private static boolean keysOnly(List<RowRanges.Range> ranges) {
    return ranges.stream().allMatch(RowRanges.Range::single);
  }

  /** The route check for a read of exactly one row key; other reads name no single tablet. */
  private CompletionStage<Void> checkSingleRow(Metadata metadata, String table, RowSet rows) {
    if (rows.getRowKeysCount() != 1 || rows.getRowRangesCount() != 0) {
      return CompletableFuture.completedStage(null);
    }
    return routes.check(metadata, table, rows.getRowKeys(0).toByteArray());
  }

  /** The table a data request names, and the authorized view it goes through if it names one. */
  private Views.Target target(String tableName, String authorizedView, String materializedView) {
    if (!materializedView.isEmpty()) {
      throw GrpcErrors.invalid("materialized_view_name", "materialized views are not supported by Tabula");
    }
    return Views.of(router, tableName, authorizedView);
  }

  /**
   * A filter checked up front (so a bad one fails before any row) and passed on serialized.
   * It is compiled into the node's filter cache, where the tablet's read then finds it.
   */
  private byte[] filterBytes(String field, RowFilter f) {
    if (f == null) {
      return new byte[0];
    }
    byte[] bytes = f.toByteArray();
    try {
      router.checkFilter(bytes);
    } catch (InvalidFilterException e) {
      throw e.sentAs(field);
    }
    return bytes;
  }

  /**
   * Every tablet's end row with the bytes before it, then the empty key with the table's
   * total: the split points a client can divide a scan at.
   */
  @Override
  public Source<SampleRowKeysResponse, NotUsed> sampleRowKeys(SampleRowKeysRequest in, Metadata metadata) {
    return GrpcErrors.streaming(() -> {
      Views.Target target = target(in.getTableName(), in.getAuthorizedViewName(), in.getMaterializedViewName());
      String table = target.table();
      return Source.completionStage(router.askEveryTablet(table, TabletActor.SampleRows::new, List.of())).mapConcat(answers -> {
        List<SampleRowKeysResponse> out = new ArrayList<>();
        long offset = 0;
        for (Router.Answer<List<Tablet.RowSample>> a : answers) {
          List<Tablet.RowSample> s = a.value();
          offset += s.isEmpty() ? 0 : s.get(s.size() - 1).offsetBytes();
          // Through a view, only split points among its rows: the others' keys are not the caller's to see.
          if (a.tablet().endRow().length > 0 && target.view().map(v -> Views.hasRow(v, a.tablet().endRow()))
              .orElse(true)) {
            out.add(SampleRowKeysResponse.newBuilder().setRowKey(ByteString.copyFrom(a.tablet().endRow()))
                .setOffsetBytes(offset).build());
          }
        }
        out.add(SampleRowKeysResponse.newBuilder().setRowKey(ByteString.EMPTY).setOffsetBytes(offset).build());
        return out;
      });
    });
  }

  // ---- writes

  @Override
  public CompletionStage<MutateRowResponse> mutateRow(MutateRowRequest in, Metadata metadata) {
    return GrpcErrors.unary(() -> {
      Views.Target target = target(in.getTableName(), in.getAuthorizedViewName(), "");
      String table = target.table();
      RowMutation rm = Mutations.withIdempotency(Mutations.rowMutation(in.getRowKey(), in.getMutationsList(),
          ClientFeatures.microsecondTimestamps(metadata)), "", in.hasIdempotency(), in.getIdempotency(),
          System.currentTimeMillis() * 1000);
      target.view().ifPresent(v -> {
        Views.checkRow(v, "row_key", in.getRowKey());
        Views.checkMutations(v, "mutations", in.getMutationsList());
      });
      return routes.check(metadata, table, rm.row())
          .thenCompose(ok -> router.<Done>ask(table, rm.row(), (t, r) -> new TabletActor.Mutate(rm, r)))
          .thenApply(a -> MutateRowResponse.getDefaultInstance());
    });
  }

  @Override
  public Source<MutateRowsResponse, NotUsed> mutateRows(MutateRowsRequest in, Metadata metadata) {
    return Source.completionStage(mutateRowsWhole(in, metadata)).mapConcat(responses -> responses);
  }

  /** The whole answer to MutateRows: one response with every entry's status, in entry order. */
  CompletionStage<List<MutateRowsResponse>> mutateRowsWhole(MutateRowsRequest in, Metadata metadata) {
    return GrpcErrors.unary(() -> {
      Views.Target target = target(in.getTableName(), in.getAuthorizedViewName(), "");
      String table = target.table();
      if (in.getEntriesCount() == 0) {
        throw GrpcErrors.invalid("entries", "at least one entry is required");
      }
      long mutations = 0;
      for (MutateRowsRequest.Entry e : in.getEntriesList()) {
        mutations += e.getMutationsCount();
      }
      if (mutations > Mutations.MAX_MUTATIONS) {
        throw GrpcErrors.invalid("entries", "hold " + mutations + " mutations in all; at most "
            + Mutations.MAX_MUTATIONS + " are allowed");
      }
      List<MutateRowsRequest.Entry> entries = in.getEntriesList();
      boolean micros = ClientFeatures.microsecondTimestamps(metadata);
      target.view().ifPresent(v -> {
        for (int i = 0; i < entries.size(); i++) {
          Views.checkRow(v, "entries[" + i + "].row_key", entries.get(i).getRowKey());
          Views.checkMutations(v, "entries[" + i + "].mutations", entries.get(i).getMutationsList());
        }
      });
      RowMutation[] rows = new RowMutation[entries.size()];
      Throwable[] invalid = new Throwable[entries.size()];
      for (int i = 0; i < rows.length; i++) {
        int index = i;
        try {
          MutateRowsRequest.Entry e = entries.get(i);
          rows[i] = Mutations.withIdempotency(Mutations.rowMutation(() -> "entries[" + index + "]", e.getRowKey(),
              e.getMutationsList(), micros), "entries[" + index + "]", e.hasIdempotency(), e.getIdempotency(),
              System.currentTimeMillis() * 1000);
        } catch (RuntimeException err) {
          invalid[i] = err;
        }
      }
      return router.table(table).thenCompose(t -> batches.mutate(table, rows)).thenApply(outcomes -> {
        MutateRowsResponse.Builder b = MutateRowsResponse.newBuilder();
        for (int i = 0; i < rows.length; i++) {
          Throwable failed = rows[i] == null ? invalid[i] : outcomes[i];
          b.addEntries(MutateRowsResponse.Entry.newBuilder().setIndex(i).setStatus(failed == null
              ? com.google.rpc.Status.getDefaultInstance() : GrpcErrors.details(GrpcErrors.from(failed))));
        }
        return List.of(b.build());
      });
    });
  }

  @Override
  public CompletionStage<CheckAndMutateRowResponse> checkAndMutateRow(CheckAndMutateRowRequest in, Metadata metadata) {
    return GrpcErrors.unary(() -> {
      Views.Target target = target(in.getTableName(), in.getAuthorizedViewName(), "");
      String table = target.table();
      byte[] row = Mutations.row("row_key", in.getRowKey());
      RowFilter asked = in.hasPredicateFilter() ? in.getPredicateFilter() : null;
      target.view().ifPresent(v -> {
        Views.checkRow(v, "row_key", in.getRowKey());
        Views.checkMutations(v, "true_mutations", in.getTrueMutationsList());
        Views.checkMutations(v, "false_mutations", in.getFalseMutationsList());
      });
      // Through a view, the predicate sees only the view's columns.
      byte[] predicate = filterBytes("predicate_filter", target.view().map(v -> Views.filter(v, asked)).orElse(asked));
      boolean micros = ClientFeatures.microsecondTimestamps(metadata);
      List<Mutation> onTrue = Mutations.branch("true_mutations", row, in.getTrueMutationsList(), micros);
      List<Mutation> onFalse = Mutations.branch("false_mutations", row, in.getFalseMutationsList(), micros);
      if (onTrue.isEmpty() && onFalse.isEmpty()) {
        throw GrpcErrors.invalid("true_mutations", "true_mutations and false_mutations are both empty");
      }
      return routes.check(metadata, table, row)
          .thenCompose(ok -> router.<Boolean>ask(table, row, (t, r) -> new TabletActor.CheckAndMutate(row, predicate,
              onTrue, onFalse, r)))
          .thenApply(a -> CheckAndMutateRowResponse.newBuilder().setPredicateMatched(a.value()).build());
    });
  }

  @Override
  public CompletionStage<ReadModifyWriteRowResponse> readModifyWriteRow(ReadModifyWriteRowRequest in,
      Metadata metadata) {
    return GrpcErrors.unary(() -> {
      Views.Target target = target(in.getTableName(), in.getAuthorizedViewName(), "");
      String table = target.table();
      byte[] row = Mutations.row("row_key", in.getRowKey());
      List<io.tabula.actors.tablet.ReadModifyWriteRule> rules = Mutations.rules(in.getRulesList());
      target.view().ifPresent(v -> {
        Views.checkRow(v, "row_key", in.getRowKey());
        Views.checkRules(v, in.getRulesList());
      });
      return routes.check(metadata, table, row)
          .thenCompose(ok -> router.<io.tabula.persistence.model.Row>ask(table, row,
              (t, r) -> new TabletActor.ReadModifyWrite(row, rules, r)))
          .thenApply(a -> ReadModifyWriteRowResponse.newBuilder().setRow(Chunks.row(a.value())).build());
    });
  }

  @Override
  public CompletionStage<PingAndWarmResponse> pingAndWarm(PingAndWarmRequest in, Metadata metadata) {
    return GrpcErrors.unary(() -> {
      Names.instance("name", in.getName());
      return CompletableFuture.completedFuture(PingAndWarmResponse.getDefaultInstance());
    });
  }

  // ---- not offered

  // ---- change streams (ChangeStreams)

  @Override
  public Source<GenerateInitialChangeStreamPartitionsResponse, NotUsed> generateInitialChangeStreamPartitions(
      GenerateInitialChangeStreamPartitionsRequest in, Metadata metadata) {
    return GrpcErrors.streaming(() -> changes.partitions(in));
  }

  @Override
  public Source<ReadChangeStreamResponse, NotUsed> readChangeStream(ReadChangeStreamRequest in, Metadata metadata) {
    return GrpcErrors.streaming(() -> changes.read(in));
  }

  @Override
  public CompletionStage<PrepareQueryResponse> prepareQuery(PrepareQueryRequest in, Metadata metadata) {
    return CompletableFuture.failedFuture(GrpcErrors.unimplemented("PrepareQuery (SQL)"));
  }

  @Override
  public Source<ExecuteQueryResponse, NotUsed> executeQuery(ExecuteQueryRequest in, Metadata metadata) {
    return Source.failed(GrpcErrors.unimplemented("ExecuteQuery (SQL)"));
  }

  /**
   * What the official clients ask before their first call when they are not built for an
   * emulator: no sessions (the node serves the classic calls), asked again every five minutes;
   * valid for ten years, so that a client that cannot ask again keeps it rather than falling
   * back to its defaults, which may turn sessions on. A polling configuration is given, not {@code stop_polling}: the Java
   * client fills a missing one in with an interval of zero.
   */
  private static final ClientConfiguration CLIENT_CONFIGURATION = ClientConfiguration.newBuilder()
      .setSessionConfiguration(SessionClientConfiguration.newBuilder().setSessionLoad(0))
      .setPollingConfiguration(ClientConfiguration.PollingConfiguration.newBuilder()
          .setPollingInterval(com.google.protobuf.Duration.newBuilder().setSeconds(300))
          .setValidityDuration(com.google.protobuf.Duration.newBuilder().setSeconds(3650L * 24 * 3600))
          .setMaxRpcRetryCount(5))
      .build();

  @Override
  public CompletionStage<ClientConfiguration> getClientConfiguration(GetClientConfigurationRequest in,
      Metadata metadata) {
    return GrpcErrors.unary(() -> {
      Names.instance("instance_name", in.getInstanceName());
      return CompletableFuture.completedFuture(CLIENT_CONFIGURATION);
    });
  }

  @Override
  public Source<SessionResponse, NotUsed> openTable(Source<SessionRequest, NotUsed> in, Metadata metadata) {
    return Source.failed(GrpcErrors.unimplemented("OpenTable (sessions)"));
  }

  @Override
  public Source<SessionResponse, NotUsed> openAuthorizedView(Source<SessionRequest, NotUsed> in, Metadata metadata) {
    return Source.failed(GrpcErrors.unimplemented("OpenAuthorizedView (sessions)"));
  }

  @Override
  public Source<SessionResponse, NotUsed> openMaterializedView(Source<SessionRequest, NotUsed> in, Metadata metadata) {
    return Source.failed(GrpcErrors.unimplemented("OpenMaterializedView (sessions)"));
  }
}
