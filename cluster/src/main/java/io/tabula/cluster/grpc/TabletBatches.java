package io.tabula.cluster.grpc;

import com.google.bigtable.v2.MutateRowsRequest;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.persistence.model.RowMutation;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.FilteredRow;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Many rows in one message per tablet: the entries of a MutateRows request, and the keys of
 * a ReadRows request that names only keys, are grouped by the tablet the node's directory
 * says holds them and sent as one {@link TabletActor.MutateBatch} or
 * {@link TabletActor.ReadRows} each, instead of one ask per row. Mutations a tablet refuses
 * as moved (a split the directory had not caught up with) go again in groups under the
 * refreshed directory; a read key refused so goes again on its own, through
 * {@link Router}'s rerouting path.
 */
final class TabletBatches {
  /** Keys of one ReadRows sent to a tablet in one message at most. */
  private static final int READ_GROUP = 256;

  /** Most keys a read gathers whole ({@link #readAll}); longer key lists are streamed. */
  static final int GATHERED_KEYS = READ_GROUP;

  private final Router router;

  TabletBatches(Router router) {
    this.router = router;
  }

  /**
   * Most bytes of row mutations one message to a tablet carries. A tablet may be served by
   * another node, and a message between nodes must fit the cluster transport's frame
   * ({@code pekko.remote.artery.advanced.maximum-frame-size}, set to 1 MiB in
   * tabula-node.conf): a larger one is dropped by the transport and its ask only times out.
   */
  static final long MESSAGE_BYTES = 512 * 1024;

  /**
   * {@code rows} cut into groups of at most {@link #MESSAGE_BYTES} of mutations each (a row
   * larger than that goes alone): MutateRows entries are independent, so a tablet's share of
   * a batch may arrive in several messages.
   */
  private static List<List<Integer>> bounded(List<Integer> rows, RowMutation[] parsed) {
    List<List<Integer>> out = new ArrayList<>();
    List<Integer> current = new ArrayList<>();
    long bytes = 0;
    for (int i : rows) {
      long size = bytesOf(parsed[i]);
      if (!current.isEmpty() && bytes + size > MESSAGE_BYTES) {
        out.add(current);
        current = new ArrayList<>();
        bytes = 0;
      }
      current.add(i);
      bytes += size;
    }
    if (!current.isEmpty()) {
      out.add(current);
    }
    return out;
  }

  /** About how many bytes a row mutation takes in a message. */
  private static long bytesOf(RowMutation rm) {
    long n = rm.row().length + 16;
    for (io.tabula.persistence.model.Mutation m : rm.mutations()) {
      n += 32;
      if (m instanceof io.tabula.persistence.model.Mutation.SetCell c) {
        n += c.qualifier().length + c.value().length + c.family().length();
      } else if (m instanceof io.tabula.persistence.model.Mutation.DeleteFromColumn d) {
        n += d.qualifier().length + d.family().length();
      }
    }
    return n;
  }

  /** Each entry's outcome as a google.rpc.Status (OK or the error), in order; never fails. */
  CompletionStage<List<com.google.rpc.Status>> mutate(String table, List<MutateRowsRequest.Entry> entries) {
    com.google.rpc.Status[] out = new com.google.rpc.Status[entries.size()];
    RowMutation[] parsed = new RowMutation[entries.size()];
    List<Integer> valid = new ArrayList<>(entries.size());
    for (int i = 0; i < entries.size(); i++) {
      MutateRowsRequest.Entry e = entries.get(i);
      int index = i;
      try {
        parsed[i] = Mutations.rowMutation(() -> "entries[" + index + "]", e.getRowKey(), e.getMutationsList());
        valid.add(i);
      } catch (RuntimeException err) {
        out[i] = status(err);
      }
    }
    return mutate(table, valid, parsed, out, router.directory(), System.nanoTime(), 0).thenApply(x -> List.of(out));
  }

  /**
   * Sends the entries {@code rows} grouped by tablet under directory {@code d}. Entries a
   * tablet refuses as moved (a split the directory had not caught up with) go again as
   * groups under the refreshed directory, after a short pause, while the request may still
   * retry; one ask per row instead turned a split into a flood of asks.
   */
  private CompletableFuture<Void> mutate(String table, List<Integer> rows, RowMutation[] parsed,
      com.google.rpc.Status[] out, Directory d, long startNanos, int attempt) {
    Map<String, List<Integer>> byTablet = new LinkedHashMap<>();
    List<CompletableFuture<?>> work = new ArrayList<>();
    for (int i : rows) {
      TabletInfo t = d.locate(table, parsed[i].row());
      if (t == null) {
        work.add(alone(table, i, parsed[i], out));
      } else {
        byTablet.computeIfAbsent(t.id(), k -> new ArrayList<>()).add(i);
      }
    }
    byTablet.forEach((tabletId, rowsOfTablet) -> bounded(rowsOfTablet, parsed).forEach(group -> {
      List<RowMutation> batch = new ArrayList<>(group.size());
      group.forEach(i -> batch.add(parsed[i]));
      work.add(router.<TabletActor.BatchOutcome>askTablet(tabletId, r -> new TabletActor.MutateBatch(batch, r))
          .handle((outcome, err) -> {
            List<Integer> moved = new ArrayList<>();
            for (int k = 0; k < group.size(); k++) {
              int i = group.get(k);
              Throwable refused = err != null ? err : refusal(outcome.refusals().get(k));
              if (refused == null) {
                out[i] = ok();
              } else if (Refusal.is(refused, ErrorCode.MOVED) && router.mayRetryMoved(startNanos)) {
                moved.add(i);
              } else {
                out[i] = status(refused);
              }
            }
            if (moved.isEmpty()) {
              return CompletableFuture.<Void>completedFuture(null);
            }
            return router.afterMove(attempt).toCompletableFuture().handle((next, refreshFailed) -> {
              if (refreshFailed != null) {
                moved.forEach(i -> out[i] = status(refreshFailed));
                return CompletableFuture.<Void>completedFuture(null);
              }
              return mutate(table, moved, parsed, out, next, startNanos, attempt + 1);
            }).thenCompose(x -> x);
          }).thenCompose(x -> x).toCompletableFuture());
    }));
    return CompletableFuture.allOf(work.toArray(CompletableFuture[]::new));
  }

  /** One entry through the per-row path, which reroutes on moved; its outcome lands in {@code out[i]}. */
  private CompletableFuture<Void> alone(String table, int i, RowMutation rm, com.google.rpc.Status[] out) {
    return router.<Done>ask(table, rm.row(), (t, r) -> new TabletActor.Mutate(rm, r))
        .handle((ok, err) -> {
          out[i] = err == null ? ok() : status(err);
          return (Void) null;
        }).toCompletableFuture();
  }

  /**
   * The rows of {@code keys} (in the order given) that have cells passing {@code filter},
   * a group's rows per list (no empty lists): consecutive keys of one tablet go in one
   * message, a few messages at a time.
   */
  Source<List<FilteredRow>, NotUsed> read(String table, List<byte[]> keys, byte[] filter) {
    return Source.from(groups(table, keys)).mapAsync(4, g -> readGroup(table, g, filter))
        .filter(rows -> !rows.isEmpty());
  }

  /**
   * The same rows gathered into one list, every group read at once: for requests of at most
   * {@link #GATHERED_KEYS} keys, where a stream per request would cost more than the reads.
   */
  CompletionStage<List<FilteredRow>> readAll(String table, List<byte[]> keys, byte[] filter) {
    List<List<byte[]>> groups = groups(table, keys);
    if (groups.size() == 1) {
      return readGroup(table, groups.get(0), filter);
    }
    List<CompletableFuture<List<FilteredRow>>> reads = new ArrayList<>(groups.size());
    for (List<byte[]> g : groups) {
      reads.add(readGroup(table, g, filter).toCompletableFuture());
    }
    return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(x -> {
      List<FilteredRow> out = new ArrayList<>(keys.size());
      reads.forEach(r -> out.addAll(r.join()));
      return out;
    });
  }

  /** {@code keys} in the order given, cut where the tablet changes or a group is full. */
  private List<List<byte[]>> groups(String table, List<byte[]> keys) {
    Directory d = router.directory();
    List<List<byte[]>> groups = new ArrayList<>();
    String current = null;
    for (byte[] k : keys) {
      TabletInfo t = d.locate(table, k);
      String id = t == null ? null : t.id();
      if (groups.isEmpty() || id == null || !id.equals(current) || groups.get(groups.size() - 1).size() >= READ_GROUP) {
        groups.add(new ArrayList<>());
      }
      groups.get(groups.size() - 1).add(k);
      current = id;
    }
    return groups;
  }

  private CompletionStage<List<FilteredRow>> readGroup(String table, List<byte[]> keys, byte[] filter) {
    TabletInfo t = router.directory().locate(table, keys.get(0));
    CompletionStage<List<FilteredRow>> local = t == null ? null : router.readLocal(t.id(), r -> r.rows(keys, filter));
    CompletionStage<List<FilteredRow>> batch = local != null ? local : t == null ? CompletableFuture.failedFuture(
        Refusal.of(ErrorCode.MOVED, "no tablet of table " + table + " is known to hold the row").exception())
        : router.<TabletActor.RowsResult>askTablet(t.id(), r -> new TabletActor.ReadRows(keys, filter, r))
            .thenApply(TabletActor.RowsResult::rows);
    return batch.handle((rows, err) -> {
      if (err == null) {
        return CompletableFuture.completedFuture(rows);
      }
      if (!Refusal.is(err, ErrorCode.MOVED)) {
        return CompletableFuture.<List<FilteredRow>>failedFuture(err);
      }
      // A split moved some of the keys: read them one by one through the rerouting path.
      return Source.from(keys).mapAsync(4, k -> readOne(table, k, filter)).mapConcat(found -> found)
          .runWith(org.apache.pekko.stream.javadsl.Sink.seq(), router.system());
    }).thenCompose(x -> x);
  }

  /** One row through the rerouting path: a list of it, or an empty list when no cell passes. */
  CompletionStage<List<FilteredRow>> readOne(String table, byte[] key, byte[] filter) {
    TabletInfo t = router.directory().locate(table, key);
    CompletionStage<FilteredRow> local = t == null ? null : router.readLocal(t.id(), r -> r.row(key, filter));
    if (local == null) {
      return routedReadOne(table, key, filter);
    }
    return local.handle((row, err) -> {
      if (err == null) {
        return CompletableFuture.completedFuture(row == null ? List.<FilteredRow>of() : List.of(row));
      }
      if (Refusal.is(err, ErrorCode.MOVED)) {
        return routedReadOne(table, key, filter);
      }
      return CompletableFuture.<List<FilteredRow>>failedFuture(GrpcErrors.from(err));
    }).thenCompose(x -> x);
  }

  private CompletionStage<List<FilteredRow>> routedReadOne(String table, byte[] key, byte[] filter) {
    return router.<TabletActor.RowResult>ask(table, key, (t, r) -> new TabletActor.ReadRow(key, filter, r))
        .thenApply(a -> a.value().row() == null ? List.of() : List.of(a.value().row()));
  }

  private static Throwable refusal(Refusal r) {
    return r == null ? null : r.exception();
  }

  private static com.google.rpc.Status ok() {
    return com.google.rpc.Status.newBuilder().setCode(0).build();
  }

  /** An entry's error status, with the same details a whole call's error would carry. */
  private static com.google.rpc.Status status(Throwable err) {
    return GrpcErrors.details(GrpcErrors.from(err));
  }
}
