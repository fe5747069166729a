package io.tabula.cluster;

import com.google.bigtable.v2.RowFilter;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.tablet.ReadModifyWriteRule;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.cluster.routing.Router;
import io.tabula.cluster.routing.Scans;
import io.tabula.cluster.routing.TabletBatches;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.FilteredRow;
import io.tabula.streams.filter.InvalidFilterException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Reads and writes from inside a JVM that hosts a Tabula node ({@link TabulaNode#tablets}),
 * with no gRPC hop: each request goes to the tablet holding its row, on this node (straight to
 * the tablet's reads, or its actor's mailbox) or on another (a cluster message), and follows a
 * tablet that split or moved, as the node's own gRPC layer does. The same operations as the
 * Tabula client: row mutations (one row atomically, or many rows each on its own),
 * check-and-mutate, read-modify-write, point reads and scans as back-pressured Pekko
 * {@link Source}s, and creating a table.
 *
 * <p>Failures complete the stages with {@link io.tabula.protocol.errors.Refused}, whose
 * {@link Refusal} says what went wrong by its {@link ErrorCode} (NOT_FOUND for an unknown table
 * or family, INVALID_ARGUMENT naming the field, UNAVAILABLE while a tablet cannot be reached);
 * a mutation that cannot be built fails at construction ({@code InvalidMutationException}).
 * Thread-safe: any actor or thread may call it.
 */
public final class TabulaTablets {
  private final Router router;
  private final TabletBatches batches;
  private final Scans scans;
  private final ActorRef<Master.Command> master;
  private final Duration askTimeout;

  TabulaTablets(Router router, ActorRef<Master.Command> master, Duration askTimeout) {
    this.router = router;
    this.batches = new TabletBatches(router);
    this.scans = new Scans(router);
    this.master = master;
    this.askTimeout = askTimeout;
  }

  /** Creates {@code table} with {@code families} and tablets split at {@code splits}; ALREADY_EXISTS if it exists. */
  public CompletionStage<TableInfo> createTable(String table, Map<String, GcPolicy> families, List<byte[]> splits) {
    return io.tabula.actors.master.StagedSplits.createTable(master, router.system(), askTimeout, table, families,
        splits);
  }

  /** The table's description; NOT_FOUND if it does not exist. */
  public CompletionStage<TableInfo> table(String table) {
    return router.table(table);
  }

  /** Applies {@code mutation}'s changes to its row atomically; completes once they are durable. */
  public CompletionStage<Done> mutate(String table, RowMutation mutation) {
    return router.table(table).thenCompose(t -> router.<Done>ask(table, mutation.row(),
        (ti, r) -> new TabletActor.Mutate(mutation, r))).thenApply(a -> a.value());
  }

  /**
   * Applies each row mutation on its own (rows of one tablet together); completes with one
   * outcome per row, in order: empty if it was applied, else why not.
   */
  public CompletionStage<List<Optional<Refusal>>> mutateRows(String table, List<RowMutation> rows) {
    return router.table(table).thenCompose(t -> batches.mutate(table, rows.toArray(RowMutation[]::new)))
        .thenApply(outcomes -> {
          List<Optional<Refusal>> out = new ArrayList<>(outcomes.length);
          for (Throwable e : outcomes) {
            out.add(e == null ? Optional.empty() : Optional.of(Refusal.in(e).orElseGet(() ->
                Refusal.of(ErrorCode.INTERNAL, String.valueOf(e.getMessage())))));
          }
          return out;
        });
  }

  /**
   * Applies {@code onMatch} to {@code row} if any cell of it passes {@code predicate} (null:
   * the row has any cell), else {@code onNoMatch}, atomically; completes with whether it matched.
   */
  public CompletionStage<Boolean> checkAndMutate(String table, byte[] row, RowFilter predicate,
      List<Mutation> onMatch, List<Mutation> onNoMatch) {
    return checked(row, "predicate", predicate).thenCompose(filter -> router.<Boolean>ask(table, row,
        (t, r) -> new TabletActor.CheckAndMutate(row, filter, List.copyOf(onMatch), List.copyOf(onNoMatch), r)))
        .thenApply(a -> a.value());
  }

  /** Appends to or increments cells of {@code row} atomically; completes with the cells it changed. */
  public CompletionStage<Row> readModifyWrite(String table, byte[] row, List<ReadModifyWriteRule> rules) {
    if (rules.isEmpty()) {
      return invalid("rules", "at least one rule is required");
    }
    return checked(row, "filter", null).thenCompose(x -> router.<Row>ask(table, row,
        (t, r) -> new TabletActor.ReadModifyWrite(row, List.copyOf(rules), r))).thenApply(a -> a.value());
  }

  /** {@code row}'s cells, or empty if it has none. */
  public CompletionStage<Optional<FilteredRow>> readRow(String table, byte[] row) {
    return readRow(table, row, null);
  }

  /** {@code row}'s cells that pass {@code filter} (null: all), or empty if none does. */
  public CompletionStage<Optional<FilteredRow>> readRow(String table, byte[] row, RowFilter filter) {
    return checked(row, "filter", filter).thenCompose(f -> router.table(table)
        .thenCompose(t -> batches.readOne(table, row, f)))
        .thenApply(rows -> rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0)));
  }

  /** Every row of {@code [start, end)} (an empty end: to the table's end), in key order, back-pressured. */
  public Source<FilteredRow, NotUsed> scan(String table, byte[] start, byte[] end) {
    return scan(table, start, end, null);
  }

  /** The rows of {@code [start, end)} with cells passing {@code filter} (null: all), in key order, back-pressured. */
  public Source<FilteredRow, NotUsed> scan(String table, byte[] start, byte[] end, RowFilter filter) {
    return Source.completionStage(filterBytes("filter", filter).thenCompose(f -> router.table(table)
        .thenApply(t -> f))).flatMapConcat(f -> scans.range(table, start, end, f, false)).mapConcat(rows -> rows);
  }

  /** The filter's bytes once {@code row} is a valid row key and the filter compiles. */
  private CompletionStage<byte[]> checked(byte[] row, String field, RowFilter filter) {
    if (row.length == 0) {
      return invalid("row", "must not be empty");
    }
    if (row.length > RowMutation.MAX_ROW_KEY_BYTES) {
      return invalid("row", "is " + row.length + " bytes, over the limit of " + RowMutation.MAX_ROW_KEY_BYTES);
    }
    return filterBytes(field, filter);
  }

  private CompletionStage<byte[]> filterBytes(String field, RowFilter filter) {
    if (filter == null) {
      return CompletableFuture.completedFuture(new byte[0]);
    }
    byte[] bytes = filter.toByteArray();
    try {
      router.checkFilter(bytes);
    } catch (InvalidFilterException e) {
      return CompletableFuture.failedFuture(Refusal.of(ErrorCode.INVALID_ARGUMENT, e.sentAs(field).getMessage())
          .exception());
    }
    return CompletableFuture.completedFuture(bytes);
  }

  private static <T> CompletionStage<T> invalid(String field, String message) {
    return CompletableFuture.failedFuture(Refusal.of(ErrorCode.INVALID_ARGUMENT, field + ": " + message).exception());
  }
}
