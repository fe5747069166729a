package io.tabula.client;

import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.MutateRowsResponse;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link TabulaClient#applyBatch}: cuts the mutations into MutateRows requests of bounded
 * entries and bytes, one node's rows per request, sends a few at a time, and resends the
 * entries that failed with a retryable code if they are idempotent, after a backoff (or the
 * longest delay the node asked for in their statuses, if longer).
 * Thread-safe; each call keeps its own results array, written by one stage at a time.
 */
final class Batches {
  private final TabulaClient client;
  private final Retrier retrier;
  private final int maxEntries;
  private final int maxBytes;
  private final int concurrency;

  Batches(TabulaClient client, Retrier retrier, int maxEntries, int maxBytes, int concurrency) {
    this.client = client;
    this.retrier = retrier;
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.concurrency = concurrency;
  }

  CompletionStage<List<MutationResult>> apply(String tableName, List<RowMutation> mutations) {
    MutationResult[] results = new MutationResult[mutations.size()];
    List<Integer> all = new ArrayList<>(mutations.size());
    for (int i = 0; i < mutations.size(); i++) {
      if (mutations.get(i).size() == 0) {
        results[i] = failed(i, mutations.get(i), new TabulaException(Status.Code.INVALID_ARGUMENT,
            "entries[" + i + "]: the row mutation has no mutations"));
      } else {
        all.add(i);
      }
    }
    if (all.isEmpty()) {
      return CompletableFuture.completedFuture(Arrays.asList(results));
    }
    // One token per application of an entry with aggregate writes, kept across its retries.
    com.google.bigtable.v2.Idempotency[] tokens = new com.google.bigtable.v2.Idempotency[mutations.size()];
    for (int i : all) {
      tokens[i] = mutations.get(i).newIdempotency();
    }
    return round(tableName, mutations, tokens, all, results, 1, System.nanoTime())
        .thenApply(x -> Arrays.asList(results));
  }

  /** Sends the entries {@code todo} once, then again those worth another attempt. */
  private CompletionStage<Void> round(String tableName, List<RowMutation> ms,
      com.google.bigtable.v2.Idempotency[] tokens, List<Integer> todo, MutationResult[] results, int n,
      long startNanos) {
    return byEndpoint(tableName, ms, todo).handle((groups, err) -> {
      if (err != null) {
        // No location for the rows (an unknown table, say): every entry of the round fails with that.
        TabulaException e = Failures.of(err);
        todo.forEach(i -> results[i] = failed(i, ms.get(i), e));
        return CompletableFuture.<Void>completedFuture(null);
      }
      List<List<Integer>> requests = new ArrayList<>();
      List<String> targets = new ArrayList<>();
      groups.forEach((ep, g) -> cut(ms, g).forEach(r -> {
        requests.add(r);
        targets.add(ep);
      }));
      // Up to `concurrency` requests in flight: that many chains, each taking the next request
      // when its last one has ended.
      AtomicInteger next = new AtomicInteger();
      List<CompletableFuture<Void>> chains = new ArrayList<>();
      for (int c = 0; c < Math.min(concurrency, requests.size()); c++) {
        chains.add(chain(next, requests, targets, tableName, ms, tokens, results).toCompletableFuture());
      }
      return CompletableFuture.allOf(chains.toArray(CompletableFuture[]::new));
    }).thenCompose(x -> x).thenCompose(done -> {
      List<Integer> again = new ArrayList<>();
      Duration pause = Duration.ZERO;
      for (int i : todo) {
        Optional<TabulaException> e = results[i].error();
        if (e.isPresent() && e.get().isRetryable() && ms.get(i).isIdempotent()) {
          again.add(i);
          Duration w = retrier.waitAfter(n, e.get());
          pause = w.compareTo(pause) > 0 ? w : pause;
        }
      }
      Optional<Duration> wait = again.isEmpty() ? Optional.empty() : retrier.within(n, startNanos, pause);
      if (wait.isEmpty()) {
        return CompletableFuture.completedFuture(null);
      }
      return CompletableFuture.runAsync(() -> { },
          CompletableFuture.delayedExecutor(wait.get().toNanos(), TimeUnit.NANOSECONDS))
          .thenCompose(x -> round(tableName, ms, tokens, again, results, n + 1, startNanos));
    });
  }

  /** Sends the requests from {@code next} on, one after another, until none is left. */
  private CompletionStage<Void> chain(AtomicInteger next, List<List<Integer>> requests, List<String> targets,
      String tableName, List<RowMutation> ms, com.google.bigtable.v2.Idempotency[] tokens, MutationResult[] results) {
    while (true) {
      int k = next.getAndIncrement();
      if (k >= requests.size()) {
        return CompletableFuture.completedFuture(null);
      }
      // send never fails; one that has already ended (refused at once) does not deepen the stack.
      CompletableFuture<Void> sent = send(tableName, targets.get(k), ms, tokens, requests.get(k), results)
          .toCompletableFuture();
      if (!sent.isDone()) {
        return sent.thenCompose(x -> chain(next, requests, targets, tableName, ms, tokens, results));
      }
    }
  }

  /** The entries grouped by the node serving their rows, in the order given within each group. */
  private CompletionStage<Map<String, List<Integer>>> byEndpoint(String tableName, List<RowMutation> ms,
      List<Integer> todo) {
    return group(tableName, ms, todo, 0, new LinkedHashMap<>());
  }

  /**
   * Adds {@code todo} from position {@code from} on to {@code groups}: at once while the rows'
   * locations are cached, and after a lookup for the first row that is not (the lookup brings
   * the tablets after it too, so the rest are usually cached then).
   */
  private CompletionStage<Map<String, List<Integer>>> group(String tableName, List<RowMutation> ms,
      List<Integer> todo, int from, Map<String, List<Integer>> groups) {
    for (int k = from; k < todo.size(); k++) {
      int i = todo.get(k);
      LocationCache.Location cached = client.locations().cached(tableName, ms.get(i).key());
      if (cached == null) {
        int next = k + 1;
        return client.locations().locate(tableName, ms.get(i).key()).thenCompose(l -> {
          groups.computeIfAbsent(l.endpoint(), e -> new ArrayList<>()).add(i);
          return group(tableName, ms, todo, next, groups);
        });
      }
      groups.computeIfAbsent(cached.endpoint(), e -> new ArrayList<>()).add(i);
    }
    return CompletableFuture.completedFuture(groups);
  }

  /** Cuts a group into requests of at most {@code maxEntries} entries and about {@code maxBytes}. */
  private List<List<Integer>> cut(List<RowMutation> ms, List<Integer> group) {
    List<List<Integer>> out = new ArrayList<>();
    List<Integer> current = new ArrayList<>();
    long bytes = 0;
    for (int i : group) {
      int size = ms.get(i).wireBytes();
      if (!current.isEmpty() && (current.size() >= maxEntries || bytes + size > maxBytes)) {
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

  /** One MutateRows request; every entry's result lands in {@code results}, whatever happens. */
  private CompletionStage<Void> send(String tableName, String endpoint, List<RowMutation> ms,
      com.google.bigtable.v2.Idempotency[] tokens, List<Integer> entries, MutationResult[] results) {
    MutateRowsRequest.Builder req = MutateRowsRequest.newBuilder().setTableName(tableName);
    for (int i : entries) {
      MutateRowsRequest.Entry.Builder e = MutateRowsRequest.Entry.newBuilder().setRowKey(ms.get(i).key())
          .addAllMutations(ms.get(i).toProto());
      if (tokens[i] != null) {
        e.setIdempotency(tokens[i]);
      }
      req.addEntries(e);
    }
    CompletionStage<List<MutateRowsResponse>> call;
    try {
      call = client.endpoint(endpoint).direct.gather(DirectCalls.MUTATE_ROWS, req.build(), null);
    } catch (RuntimeException e) {
      call = CompletableFuture.failedFuture(e);
    }
    return call.handle((responses, err) -> {
      if (err != null) {
        client.forget(tableName, ms.get(entries.get(0)).key(), err);
        TabulaException e = Failures.of(err);
        entries.forEach(i -> results[i] = failed(i, ms.get(i), e));
        return null;
      }
      boolean[] answered = new boolean[entries.size()];
      for (MutateRowsResponse r : responses) {
        for (MutateRowsResponse.Entry e : r.getEntriesList()) {
          long k = e.getIndex();
          if (k < 0 || k >= entries.size()) {
            continue;
          }
          int i = entries.get((int) k);
          answered[(int) k] = true;
          results[i] = e.getStatus().getCode() == 0 ? new MutationResult(i, ms.get(i).key(), Optional.empty())
              : failed(i, ms.get(i), Failures.ofEntry(e.getStatus()));
        }
      }
      for (int k = 0; k < answered.length; k++) {
        if (!answered[k]) {
          int i = entries.get(k);
          results[i] = failed(i, ms.get(i), new TabulaException(Status.Code.INTERNAL,
              "the node gave no result for this entry"));
        }
      }
      return null;
    });
  }

  private static MutationResult failed(int i, RowMutation m, TabulaException e) {
    return new MutationResult(i, m.key(), Optional.of(e));
  }
}
