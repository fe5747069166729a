package io.tabula.client.cli;

import io.tabula.client.MutationResult;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * The writing side of an import: gathers rows into batches, sends each with
 * {@link TabulaClient#applyBatch} while the next is being read, keeping a few in flight,
 * and fails on the first row the node refuses, naming its line. Every cell of an import
 * carries the same timestamp, so the batches are idempotent and the client retries them.
 * Not thread-safe.
 */
final class ImportBatches {
  /** Batches sent and not yet confirmed, at most. */
  private static final int IN_FLIGHT = 4;

  private final TabulaClient client;
  private final String table;
  private final String source;
  private final int batchSize;
  private final long timestampMicros;
  private final Deque<Pending> inFlight = new ArrayDeque<>();
  private List<RowMutation> rows = new ArrayList<>();
  private List<Long> lines = new ArrayList<>();
  private long written;

  /** A batch sent: its rows' line numbers, in the batch's order. */
  private record Pending(CompletionStage<List<MutationResult>> results, List<Long> lines) {}

  /**
   * @param source the input's name, for messages
   * @param timestampMicros the timestamp of every cell written
   */
  ImportBatches(TabulaClient client, String table, String source, int batchSize, long timestampMicros) {
    this.client = client;
    this.table = table;
    this.source = source;
    this.batchSize = batchSize;
    this.timestampMicros = timestampMicros;
  }

  /** Queues the row read from {@code line}; sends a batch when one is full. */
  void add(TextRow row, long line) {
    RowMutation m = RowMutation.create(row.key());
    for (Map.Entry<String, String> c : row.cells().entrySet()) {
      m.setCell(TextRow.family(c.getKey()), TextRow.qualifier(c.getKey()), timestampMicros, c.getValue());
    }
    rows.add(m);
    lines.add(line);
    if (rows.size() >= batchSize) {
      send();
      while (inFlight.size() > IN_FLIGHT) {
        awaitOldest();
      }
    }
  }

  /** Sends what is queued and waits until every batch is written; fails on the first row refused. */
  void flush() {
    send();
    while (!inFlight.isEmpty()) {
      awaitOldest();
    }
  }

  /** Rows the node has confirmed. */
  long written() {
    return written;
  }

  private void send() {
    if (rows.isEmpty()) {
      return;
    }
    inFlight.add(new Pending(client.applyBatch(table, rows), lines));
    rows = new ArrayList<>();
    lines = new ArrayList<>();
  }

  private void awaitOldest() {
    Pending p = inFlight.removeFirst();
    List<MutationResult> results = Blocking.join(p.results());
    for (MutationResult r : results) {
      if (!r.ok()) {
        throw new CommandFailedException(r.error().orElseThrow().getMessage() + " (" + source + " line "
            + p.lines().get(r.index()) + ", row " + r.key().toStringUtf8() + ")", r.error().orElseThrow());
      }
    }
    written += results.size();
  }
}
